# Base image for Java tasks when a registry is reachable: `benchgym images base --from registry`.
ARG JDK=17
FROM maven:3.9-eclipse-temurin-${JDK}
RUN apt-get update \
 && apt-get install -y --no-install-recommends git patch procps \
 && rm -rf /var/lib/apt/lists/*
