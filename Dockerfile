# Domino Arena: one image for every service in docker-compose.yml (migrate, worker, beat,
# web); each service chooses its command. See docs/deployment.md.
FROM python:3.11-slim-bookworm

# The bot sandbox (arena/match/sandbox.py): bubblewrap for the namespaces, libseccomp2 for the
# seccomp filter (loaded by pyseccomp), util-linux for setpriv (drops to a per-slot uid
# before bwrap). util-linux is already in the base image; it is named so the dependency is
# explicit. The bots' runtimes (arena/match/runtimes.py): Debian's python3 (/usr/bin/python3,
# what python and python-numpy bots run under, apart from the image's own Python) and
# nodejs (/usr/bin/node, the javascript runtime); Debian's compilers for the compiled
# runtimes: GCC 12 for cpp (g++-12) and c (gcc-12), libc6-dev for static binaries, Go 1.19
# for go (golang-1.19-go), rustc 1.63 for rust (linked by gcc-12), OpenJDK 17 for java
# (openjdk-17-jdk-headless: javac, and java with it; its postinst links man pages into
# /usr/share/man/man1, which the slim image lacks).
RUN mkdir -p /usr/share/man/man1 && apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap libseccomp2 util-linux \
        python3 nodejs g++-12 gcc-12 libc6-dev golang-1.19-go rustc openjdk-17-jdk-headless \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY arena ./arena
COPY bots ./bots
COPY workers ./workers
COPY web ./web
COPY scripts ./scripts
# The project (gunicorn included), not editable: the image is the release.
RUN pip install --no-cache-dir .
# The python-numpy runtime's environment: numpy's pinned wheel for /usr/bin/python3's ABI,
# unpacked read-only at /opt/arena/runtimes/python-numpy-<version> (scripts/install-runtimes).
RUN scripts/install-runtimes python && rm -rf /root/.cache/pip

# No USER here, on purpose: the image runs as root by default because the workers need it.
# The sandbox starts every bot as root's child and drops it to an unprivileged uid of its
# own per slot (61000 + slot) with setpriv, then creates a per-slot memory cgroup; both
# need root (bwrap started by root would otherwise leave the bot root). The web server
# needs none of this: docker-compose.yml runs it as an unprivileged user (`user:`).
CMD ["arena", "--help"]
