# Test fixture: stands in for nginx:<1.28>-alpine (see build.sh), with Debian's nginx (recent
# enough for `resolve` in an upstream) and wget, which the compose health check calls.
ARG BASE
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx wget \
 && rm -rf /var/lib/apt/lists/* \
 && ln -sf /dev/stderr /var/log/nginx/error.log \
 && ln -sf /dev/stdout /var/log/nginx/access.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
