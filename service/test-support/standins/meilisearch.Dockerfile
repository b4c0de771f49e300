# Test fixture: stands in for getmeili/meilisearch:<tag> (see build.sh), around a meilisearch
# binary found on the machine, laid out as the real image: /bin/meilisearch under tini, data in
# /meili_data, listening on 7700, curl for the compose health check.
ARG BASE
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl tini \
 && rm -rf /var/lib/apt/lists/*
COPY meilisearch /bin/meilisearch
ENV MEILI_HTTP_ADDR=0.0.0.0:7700 \
    MEILI_SERVER_PROVIDER=docker
WORKDIR /meili_data
EXPOSE 7700
ENTRYPOINT ["tini", "--"]
CMD ["/bin/meilisearch"]
