"""segue.worker: the data plane every StreamApp pod runs (issue 4)."""
