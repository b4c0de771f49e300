# Test fixture: stands in for node:<24>-slim (see build.sh). Node and npm come from the npm
# registry; the user `node` (uid 1000) is the one the project's Dockerfile switches to.
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
COPY npm.tgz /tmp/npm.tgz
RUN mkdir -p /usr/local/lib/node_modules/npm \
 && tar -xzf /tmp/npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \
 && rm /tmp/npm.tgz \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
# The base trusts the host's CA bundle; Node reads it from here.
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
