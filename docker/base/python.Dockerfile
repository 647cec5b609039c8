# Base image for Python tasks when a registry is reachable: `benchgym images base --from registry`.
ARG PYTHON=3.11
FROM python:${PYTHON}-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git patch procps ca-certificates \
 && rm -rf /var/lib/apt/lists/*
