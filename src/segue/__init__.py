"""Segue: scale stateful Kafka stream applications on Kubernetes without downtime.

The import root of one distribution. Its subpackages live in top-level folders
of the repository and are linked in here:

- ``segue.assignor``: the pure decision core (placement, learners, expansion);
- ``segue.operator``: the Kopf operator (observe -> decide -> act);
- ``segue.worker``: the data plane the application pods run;
- ``segue.pipeline``: the PySpark what-if pipeline;
- ``segue.stack``: the embedded local stack (Kafka, kube control plane, pod runner)
  used by the tests and ``make demo``.
"""

__version__ = "0.1.0"
