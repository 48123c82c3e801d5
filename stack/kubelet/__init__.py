"""The pod runner: a kubelet (and scheduler) for end-to-end tests, with no
container runtime. Pods bound to its Node run as local processes, each on its
own loopback address; docs/pod-runner.md says what that means and what it does
not do.

Module map, from the outside in:

- ``runner``: :class:`PodRunner` -- registers the Node, watches pods, binds the
  pending ones, gives each bound pod a supervisor;
- ``node``: the Node object and the pods' loopback addresses;
- ``watch``: list+watch that relists on 410 and errors; ``api``: JSON requests;
- ``supervisor``: one pod's lifecycle (start, restart, probe, terminate, report),
  with ``sandbox`` (its address, directories, volumes and launch specs) and
  ``termination`` (preStop, SIGTERM, grace period, SIGKILL);
- ``container``: one container's process, logs, probes and kill;
- ``podspec`` and ``status``: the pure rules (env, expansion, paths; phase,
  conditions, container statuses);
- ``volumes``, ``token``, ``claims``: volumes on disk, ServiceAccount tokens,
  PersistentVolumeClaims' directories;
- ``probes``: httpGet/tcpSocket/exec probes and hooks; ``events``: Events;
  ``context``: what all supervisors share.
"""

from segue.stack.kubelet.runner import PodRunner

__all__ = ["PodRunner"]
