"""segue.pipeline: the PySpark what-if pipeline over scaling histories (a later issue)."""
