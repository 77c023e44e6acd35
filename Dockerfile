# durable-agent worker image (first version: single stage, dev dependencies kept for the build).
#
#   docker build -t durable-agent:local .
#   docker run --rm -e TEMPORAL_ADDRESS=host.docker.internal:7233 -e ANTHROPIC_API_KEY \
#     -v "$PWD:/workspace" -v durable-agent-data:/data durable-agent:local
#
# See docker-compose.yml for the full stack (Postgres, Temporal, Temporal UI, SeaweedFS as the shared S3 store, workers).
FROM node:20-bookworm-slim

# ripgrep backs the agent's Grep/Glob tools; git is used by the agent's Bash tool and by some npm installs;
# bubblewrap is the sandbox Bash runs in. It needs user namespaces, which Docker's default seccomp
# profile refuses: run the container with `--security-opt seccomp=unconfined` (and
# `--security-opt apparmor=unconfined` where AppArmor is on), or the worker says at start that it
# has no sandbox and jobs must opt out (--no-sandbox) to run Bash.
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ripgrep git ca-certificates bubblewrap \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Dependencies first, so this layer is reused while only sources change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY . .
RUN npm run build --if-present

# /data holds DURABLE_AGENT_HOME (a named volume in docker-compose.yml); /workspace is the user's repo.
RUN mkdir -p /data /workspace && chown node:node /data /workspace

ENV NODE_ENV=production \
  DURABLE_AGENT_HOME=/data \
  TEMPORAL_ADDRESS=temporal:7233

USER node
WORKDIR /workspace
CMD ["node", "/app/bin/durable-agent.js", "worker"]
