"""The fault suite runs WordCount under the operator, so it shares the operator
tests' fixtures (``operator``, ``apps``, the CRD) rather than defining its own."""

from tests.operator.conftest import apps, operator  # noqa: F401  (fixtures, re-exported)
