"""Rules and CEL: loading the YAML rules (loading.py), evaluating them on a bundle (engine.py)
with the CEL evaluator (cel/) and the functions rules may call (functions.py), and ranking
what they find by root cause (ranking.py)."""
