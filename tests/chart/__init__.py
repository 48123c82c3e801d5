"""The Helm chart (charts/segue): rendered with the local stack's helm, no cluster needed."""
