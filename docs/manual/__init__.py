"""The troubleshooting manual and its row catalogue (data only)."""
