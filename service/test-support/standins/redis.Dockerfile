# Test fixture: stands in for redis:<8>-alpine (see build.sh), with Debian's redis-server and
# redis-cli. As the real image's entry point does, a server started without a configuration file
# answers on every interface without protected mode (the compose network is its boundary).
ARG BASE
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["sh", "/usr/local/bin/docker-entrypoint.sh"]
CMD ["redis-server"]
