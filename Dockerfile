# kuota's image: one image, two processes (`kuota-scheduler`, `kuota-webhook`),
# plus `python -m certs bootstrap` for the chart's self-managed certificates.
# The chart picks the process with `command:`.
#
#   docker build -t kuota:0.1.0 .
#
# Stage 1 builds a virtual environment with kuota and its runtime
# dependencies only (pyproject.toml [project.dependencies]; no dev extras).
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/kuota
COPY pyproject.toml README.md ./
COPY scheduler ./scheduler
COPY webhook ./webhook
COPY certs ./certs
RUN /opt/kuota/bin/pip install . && /opt/kuota/bin/pip uninstall --yes pip

# Stage 2: the slim runtime, the virtual environment, a non-root user.
FROM python:3.11-slim
ENV PATH=/opt/kuota/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /opt/kuota /opt/kuota
RUN groupadd --system --gid 65532 kuota \
 && useradd --system --uid 65532 --gid kuota --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin kuota
USER 65532:65532
WORKDIR /tmp
EXPOSE 9443 8080 8081
# Default: the scheduler; the chart sets the command of each container.
ENTRYPOINT []
CMD ["kuota-scheduler", "--help"]
