# The one image of Segue: the operator (`segue operator`, the default) and the app pods
# (`segue worker --app MODULE:OBJECT`, the example apps included). Runtime dependencies
# only, pinned by constraints.txt; no compiler, no dev extras, no test stack.
# tests/test_image.py lints this file and runs its RUN steps and entry point in a clean
# virtualenv, so what is written here is what is tested.

ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    WHEELS=/wheels
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY src/ src/
COPY assignor/ assignor/
COPY operator/ operator/
COPY pipeline/ pipeline/
COPY protocol/ protocol/
COPY worker/ worker/
RUN pip wheel --no-cache-dir --no-deps --wheel-dir "${WHEELS}" . \
    && pip download --no-cache-dir --only-binary=:all: --dest "${WHEELS}" \
        --requirement constraints.txt

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
# Where the image was built from: set by the build (--build-arg SOURCE=<repository URL>).
ARG SOURCE=""
LABEL org.opencontainers.image.title="segue" \
      org.opencontainers.image.description="Scale stateful Kafka stream applications on Kubernetes without downtime" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    WHEELS=/wheels \
    CONSTRAINTS=/tmp/constraints.txt
COPY --from=build /wheels /wheels
COPY constraints.txt /tmp/constraints.txt
RUN pip install --no-cache-dir --no-index --find-links "${WHEELS}" \
        --constraint "${CONSTRAINTS}" "segue==${VERSION}" \
    && rm -rf "${WHEELS}" "${CONSTRAINTS}"
USER 10001:10001
ENTRYPOINT ["segue"]
CMD ["operator"]
