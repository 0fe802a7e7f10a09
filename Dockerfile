# kroscope's image: `make image` builds it (docker or podman; ko without
# them, see .ko.yaml). Two stages: a static binary built with the Go
# toolchain, then only that binary on distroless/static as the nonroot
# user (uid 65532): no shell, no package manager, nothing to patch but Go.
FROM golang:1.26 AS build
WORKDIR /src
# Modules first: a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/kroscope ./cmd/kroscope

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kroscope /kroscope
USER 65532:65532
ENTRYPOINT ["/kroscope"]
CMD ["run", "--cluster-rgds", "--log-format=json", "--output=json", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8078"]
