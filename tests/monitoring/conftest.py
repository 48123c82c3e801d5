"""The monitoring e2e runs WordCount under the operator, as the fault suite does, so it
shares the operator tests' fixtures (``operator``, ``apps``, the CRD)."""

from tests.operator.conftest import apps, operator  # noqa: F401  (fixtures, re-exported)
