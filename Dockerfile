# kuota's image: one image, two processes (`kuota-scheduler`, `kuota-webhook`),
# plus `python -m certs bootstrap` for the chart's self-managed certificates.
# The chart picks the process with `command:`.
#
#   docker build -t kuota:0.1.0 .
#
# Without Docker, `make image` builds the same image from the same Debian
# packages (e2e/image: mmdebstrap + chroot, written as an OCI archive);
# tests/image checks that this file and that recipe agree.
#
# Stage 1 builds a virtual environment with kuota and its runtime
# dependencies only (pyproject.toml [project.dependencies]; no dev extras),
# on Debian bookworm's own Python 3.11.
FROM debian:bookworm-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
 && apt-get install --yes --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
RUN python3 -m venv /opt/kuota
COPY pyproject.toml README.md ./
COPY scheduler ./scheduler
COPY webhook ./webhook
COPY certs ./certs
RUN /opt/kuota/bin/pip install . && /opt/kuota/bin/pip uninstall --yes pip

# Stage 2: the same base with python3 only, the virtual environment, a non-root user.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install --yes --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/opt/kuota/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
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
