# The one image of Segue: the operator (`segue operator`, the default) and the app pods
# (`segue worker --app MODULE:OBJECT`, the example apps included), plus the Kafka Streams
# agent jar (/opt/segue/segue-kstreams.jar) the operator copies into Kafka Streams app
# pods. Runtime dependencies only, pinned by constraints.txt; no compiler, no JDK, no dev
# extras, no test stack. tests/test_image.py lints this file and runs its RUN steps (the
# jar's Maven build included) and entry point in a clean virtualenv, so what is written
# here is what is tested.

ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm
ARG MAVEN_IMAGE=maven:3.9.16-eclipse-temurin-17

# The plugin and agent (kstreams/), on Java 17 as the pom's release. Tests skipped: they
# run in `make test` (make kstreams) and read fixtures outside this stage.
FROM ${MAVEN_IMAGE} AS kstreams
WORKDIR /kstreams
COPY kstreams/pom.xml ./
COPY kstreams/src/ src/
RUN mvn -B -q package -Dmaven.test.skip=true

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
# The agent jar: the operator's init container copies it into a Kafka Streams pod's
# emptyDir, as the image's user or the pod's, so readable by all whatever the umask.
COPY --from=kstreams --chmod=0644 /kstreams/target/segue-kstreams-0.1.0.jar \
    /opt/segue/segue-kstreams.jar
USER 10001:10001
ENTRYPOINT ["segue"]
CMD ["operator"]
