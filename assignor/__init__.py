"""segue.assignor: the pure decision core's placement engine (issue 3)."""
