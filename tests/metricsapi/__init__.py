"""The external metrics API (segue.operator.metricsapi): its answers, and the real
aggregation layer of the local stack's API server proxying to it."""
