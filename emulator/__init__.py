"""A read-only Kubernetes API on loopback over a cluster's data (cluster.py): a bundle
(`tf-analyze --serve`) or a scenario the tests load (tests/scenarioloader.py), served with
real API semantics to the real kubectl and the real `kubernetes` client (server.py, which
routes each request to discovery.py, objects.py, logs.py or execs.py, over transport.py)."""
