# jwarp on a host with RDMA NICs (iWARP RNICs, RoCE) through the DiSNI provider.
#
#   docker build -t jwarp .
#   docker run --rm -it \
#     --device=/dev/infiniband/uverbs0 --device=/dev/infiniband/rdma_cm \
#     --cap-add=IPC_LOCK --ulimit memlock=-1 --network=host \
#     jwarp                      # prints the DiSNI provider report (devices, IRD/ORD limits)
#
# Pass every /dev/infiniband/uverbsN the host has. --network=host lets rdma_cm bind the host's
# RDMA addresses. The image's own command is `java -jar /opt/jwarp/jwarp.jar disni info` (the
# jar's manifest carries the Add-Exports DiSNI needs, so no JVM flags); run other commands with
#   docker run ... jwarp java -jar /opt/jwarp/jwarp.jar --help

# ---- build stage: the jar with libdisni.so built against Debian's rdma-core ------------------
FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      openjdk-17-jdk-headless maven gcc make libc6-dev libibverbs-dev librdmacm-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pom.xml ./
COPY java/core/pom.xml java/core/
COPY java/cli/pom.xml java/cli/
COPY benchmarks/pom.xml benchmarks/
RUN mvn -B -q -pl java/cli -am dependency:go-offline || true
COPY . .
# The build always makes libdisni.so (it fails without the rdma-core headers installed above) and
# puts it into the jar at org/jwarp/native/linux-<arch>/; device tests are excluded by default.
RUN mvn -B -q -pl java/cli -am package -DskipTests \
 && jar tf java/cli/target/jwarp-cli-*-all.jar | grep -q 'org/jwarp/native/linux-.*/libdisni.so'

# ---- runtime stage: JRE + rdma-core user space only ------------------------------------------
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      openjdk-17-jre-headless libibverbs1 librdmacm1 ibverbs-providers rdma-core \
      ibverbs-utils rdmacm-utils \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/java/cli/target/jwarp-cli-*-all.jar /opt/jwarp/jwarp.jar
# libdisni is extracted from the jar to the cache on first use; no LD_LIBRARY_PATH needed.
ENV XDG_CACHE_HOME=/var/cache
ENTRYPOINT []
CMD ["java", "-jar", "/opt/jwarp/jwarp.jar", "disni", "info"]
