# Everyday commands; docs/contributing.md says what each does.
STATICCHECK := go run honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCH ?= --mode e2e --duration 15s

.PHONY: build test bench fuzz lint

build:
	go build -o bin/skiplock ./cmd/skiplock

test:
	./scripts/test

bench:
	go run ./cmd/skiplock bench $(BENCH)

fuzz:
	go test -run '^$$' -fuzz FuzzRouter -fuzztime 1m ./server/

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	$(STATICCHECK) ./...
	cd bench/compare && go vet ./... && $(STATICCHECK) ./...
