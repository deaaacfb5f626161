# Kite in a container: `docker build -t kite .`, then
#   docker run --rm --network host -v /run/nfd:/run/nfd kite
# Stage 1 builds the release binary; stage 2 is a Debian slim image with the binary, the
# default configuration (scripts/default-config.sh, as the Debian package installs it), the
# manual pages and the bash completion, running `kite run`.

FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p kite --bin kite \
    && strip --strip-debug target/release/kite \
    && scripts/default-config.sh > /kite.toml \
    && target/release/kite run --config /kite.toml --print-config > /dev/null \
    && target/release/kite man /man1 > /dev/null \
    && gzip -9n /man1/*.1 \
    && target/release/kite completions bash > /kite.bash

FROM debian:bookworm-slim
COPY --from=build /src/target/release/kite /usr/bin/kite
COPY --from=build /kite.toml /etc/kite/kite.toml
COPY --from=build /man1/ /usr/share/man/man1/
COPY --from=build /kite.bash /usr/share/bash-completion/completions/kite
# NFD's ports: UDP and TCP 6363, WebSocket 9696; local applications use the unix socket in
# /run/nfd (mount it to reach them from the host).
EXPOSE 6363/udp 6363/tcp 9696/tcp
VOLUME /run/nfd
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/kite"]
CMD ["run", "--config", "/etc/kite/kite.toml"]
