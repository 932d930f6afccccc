# ingot: one entry point. `make run` serves the reference service, `make test`
# runs every test; both install what they need first (tools/setup).
# Everything generated goes to build/.

BUILD    ?= build
CC_MUSL  ?= musl-gcc
CC_HOST  ?= cc
DEPS     := $(BUILD)/deps
OBJ      := $(BUILD)/obj
# An app is its OpenAPI document, its handlers (APP_SRCS) and libraries
# (APP_LDLIBS) and its migrations: by default the reference service
# (schemas/, app/). tools/make/app.mk sets these for an app in a directory
# of its own (see the file): its generated code, objects, binary and images
# go to APP_BUILD, the runtime's objects stay under BUILD, shared.
SCHEMA     ?= schemas/service.json
APP_DIR    ?=
APP_SRCS   ?= $(wildcard app/*.c)
APP_BUILD  ?= $(BUILD)
APP_NAME   ?= service
APP_LDLIBS ?=
# The handler tests' link is the host compiler's (ASan): its libraries may
# differ from the musl binary's.
APP_TEST_LDLIBS ?= $(APP_LDLIBS)
GEN      := $(APP_BUILD)/gen
# The runtime's own generated code (the trust anchors).
RT_GEN   := $(BUILD)/gen

WARN     := -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE
# -fno-pie: the link is -static, not -static-pie, at a fixed address (the
# unikernel too: PVH loads it where it was linked), so no code needs to be
# position-independent. Debian's gcc makes PIE by default, which moves 18 KB
# of pointer tables from read-only data into writable .data.rel.ro (3.8 KB
# more in all). -fno-stack-protector: Debian's gcc adds no canaries by
# default; toolchains that do (Ubuntu's, Alpine's) would put a check into
# ~480 functions, 9.7 KB (-fstack-protector-strong): the flag makes the
# choice the same on every host. No -fno-plt: a static link has no PLT; the
# flag only turns each call to another file's function into a call through
# the GOT, which the linker rewrites into a 6-byte `addr32 call` (2.9 KB
# more, nothing gained). Measured on build/bin/service with gcc 12.
CFLAGS   := $(WARN) -O2 -I. -Iinclude -I$(GEN) -I$(DEPS)/musl/include \
            -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
            -fno-stack-protector -fno-pie
# A frame larger than a page could step over a coroutine stack's guard page
# (kernel/runtime/coro.h) into the memory below it: with stack clash
# protection such a frame touches each page in turn, so it faults in the
# guard. Only functions with frames of 4 KiB or more change.
CFLAGS   += -fstack-clash-protection
# Code that runs once at the start, at the end, or on a rare path is
# compiled for size (-Os: no 16-byte alignment of functions, jumps and
# loops, no unrolling): none of it is on a request's path, so the speed of
# -O2 buys nothing there and its bytes cost file size (and, at the start,
# resident pages). What counts as cold here: the settings and the
# process's start (PID 1 in a VM, cores, signals), the server's start,
# drain, stats and admin port, the metrics exposition, the resolver and
# the dial, the trust anchors' settings. Also the outbound client, whole,
# and the database client but for a query's own path (PG_HOT): their
# requests wait on a network round trip, and the HTTP server's path runs
# none of them. A query's path is the exception because a pipelined batch
# of them is the CPU of a database route (the +3% budget of issue 26):
# building Bind/Execute/Sync, the statement cache, reading DataRows and
# decoding values cost 10% more instructions per request on /queries at
# -Os (82,910 against 75,170), for 4 KiB of file. And net/tls/bearssl.c,
# the backend's setup (keys, chains, anchors, engines) and thin calls
# into BearSSL (tls.c, the record loop, stays -O2). And net/lambda: under
# Lambda its event mapping runs once per invocation, beside two HTTP calls
# to the Runtime API over loopback (the next event, the answer) that cost
# far more; elsewhere it never runs. So does net/http/inproc.c, the in-process request it makes
# of the engine per invocation. And the cron schedules' next fire time
# (cron_expr.c): once a tick.
PG_HOT   := net/pg/statements.c net/pg/writer.c net/pg/wire.c net/pg/types.c net/pg/results.c \
            net/pg/linear.c net/pg/query.c net/pg/pipeline.c net/pg/conn_io.c net/pg/pool.c
COLD_SRC := kernel/runtime/config.c kernel/runtime/file.c kernel/runtime/base64.c kernel/runtime/cron_expr.c \
            $(wildcard kernel/process/*.c) \
            net/start.c net/unlinked.c net/stack_settings.c \
            net/server/server_settings.c net/server/server.c net/server/layout.c net/server/listen.c \
            net/server/drain.c net/server/stats.c net/server/admin.c net/server/activation.c net/server/idle.c \
            net/server/server_metrics.c net/server/watchdog.c net/server/log_level.c net/server/reload.c \
            net/server/conn_limit.c net/server/mem_budget.c net/http/error_log.c kernel/runtime/membudget_log.c \
            net/http/cors_settings.c net/http/client_addr_settings.c net/http/hooks_settings.c \
            net/metrics/expo.c net/metrics/process.c \
            $(filter-out $(PG_HOT),$(wildcard net/pg/*.c)) $(wildcard net/pubsub/*.c net/nats/*.c net/client/*.c net/dns/*.c net/dial/*.c) \
            net/tls/bearssl.c net/tls/trust.c net/tls/trust_settings.c net/tls/tls_metrics.c \
            $(wildcard net/lambda/*.c net/cron/*.c) net/http/inproc.c net/api/main.c net/api/jwks_remote.c \
            $(filter-out net/auth/token_cache.c,$(wildcard net/auth/*.c))
$(COLD_SRC:%.c=$(OBJ)/%.o): CFLAGS += -Os

# net/cold.ld keeps code that an idle process never runs (TLS, the
# outbound client) away from the startup path's pages: see the file.
# -z noseparate-code: the ELF header (0x2a8 bytes, read at the start by
# musl's TLS setup) shares .text's first page instead of taking a page and
# a mapping of its own: one resident page and ~3.4 KiB of file less. The
# price is those header bytes in an executable mapping; .rodata keeps a
# mapping of its own, not executable (net/cold.ld's .rodata.gap).
LDFLAGS  := -static -Wl,--gc-sections -Wl,-O1 -Wl,--build-id=none -s \
            -Wl,-z,max-page-size=4096 -Wl,-z,noseparate-code -Wl,-T,net/cold.ld
# The script and the list it INCLUDEs (the database routes' path): a
# change to either relinks.
LAYOUT   := net/cold.ld net/request_path.ld

# The TLS backend (net/tls/backend.h): bearssl (default), mbedtls, or none
# (no TLS at all: net/tls/none.c, for the small unikernel). Each has its
# own objects and binary, so all can be built side by side.
TLS      ?= bearssl
ifeq ($(TLS),bearssl)
TLS_LIBS := $(DEPS)/musl/lib/libbearssl.a
else ifeq ($(TLS),mbedtls)
TLS_LIBS := $(DEPS)/musl/lib/libmbedtls.a $(DEPS)/musl/lib/libmbedx509.a $(DEPS)/musl/lib/libmbedcrypto.a
TLS_SUFFIX := -mbedtls
OBJ      := $(BUILD)/obj-mbedtls
CFLAGS   += -DMBEDTLS_CONFIG_FILE='<ingot_mbedtls_config.h>'
else ifeq ($(TLS),none)
TLS_LIBS :=
TLS_SUFFIX := -notls
OBJ      := $(BUILD)/obj-notls
else
$(error TLS must be bearssl, mbedtls or none, not "$(TLS)")
endif
BIN      := $(APP_BUILD)/bin/$(APP_NAME)$(TLS_SUFFIX)
# The app's own objects: the reference service's stay in OBJ, as before.
APP_OBJDIR := $(if $(APP_DIR),$(APP_BUILD)/obj$(TLS_SUFFIX),$(OBJ))
# The app's generated database code runs per query, not per byte: -Os (as
# COLD_SRC; defined here, where APP_OBJDIR is).
$(APP_OBJDIR)/gen/migrations.o $(APP_OBJDIR)/gen/queries.o: CFLAGS += -Os
# app/service.c hashes with BearSSL whatever the TLS backend (with none,
# only BearSSL's hash code is linked: --gc-sections drops the rest).
LIBS     := $(TLS_LIBS) $(DEPS)/musl/lib/libbearssl.a

# The TLS-independent part of net/tls is every file but the backends.
TLS_BACKENDS := net/tls/bearssl.c net/tls/mbedtls.c net/tls/none.c
TLS_SRC     := $(filter-out $(TLS_BACKENDS),$(wildcard net/tls/*.c)) net/tls/$(TLS).c
# net/api/main.c is the service's main(): programs with their own (the
# test client, benchmarks, tests that set up a core) link all but it.
API_MAIN    := net/api/main.c
API_MAIN_OBJ := $(OBJ)/$(API_MAIN:.c=.o)
# net/testing.c (handler tests without sockets) is no part of a service.
TEST_API_MAIN := net/testing.c
RUNTIME_SRC := $(wildcard kernel/runtime/*.c kernel/process/*.c) $(filter-out $(TEST_API_MAIN),$(wildcard net/*.c)) $(wildcard net/sock/*.c) $(wildcard net/http/*.c) $(wildcard net/ws/*.c) $(wildcard net/server/*.c) \
               $(wildcard net/metrics/*.c) $(filter-out $(API_MAIN),$(wildcard net/api/*.c)) $(wildcard net/dns/*.c) $(wildcard net/dial/*.c) $(wildcard net/client/*.c) $(wildcard net/pg/*.c) $(wildcard net/pubsub/*.c) $(wildcard net/nats/*.c) $(wildcard net/lambda/*.c) $(wildcard net/cron/*.c) $(wildcard net/auth/*.c) $(TLS_SRC)
APP_SRC     := $(APP_SRCS) $(API_MAIN)
GEN_SRC     := $(GEN)/api.c
# The host tools read their inputs with the runtime's kernel/runtime/file.c.
# schemac checks the document it packs with the runtime's kernel/runtime/lz.c.
# schemac's table of the C library's names that the generated api.h
# declares (tools/schemac/libc_names.h) is made from musl's headers.
SCHEMAC_LIBC_NAMES := $(BUILD)/tools/schemac/libc_names.c
# schemac --queries talks to the build's PostgreSQL with net/pg's own wire
# code and SCRAM, compiled for the host (tools/schemac/pg_host.c).
SCHEMAC_PG_SRC := net/pg/wire.c net/pg/writer.c net/pg/types.c net/pg/auth.c kernel/runtime/base64.c \
                  kernel/runtime/arena.c kernel/runtime/pool.c
# schemac judges x-ingot-cron's schedules with the runtime's own parser.
SCHEMAC_SRC := $(wildcard tools/schemac/*.c) kernel/runtime/file.c kernel/runtime/lz.c kernel/runtime/cron_expr.c \
               $(SCHEMAC_PG_SRC) $(SCHEMAC_LIBC_NAMES)
SCHEMAC_LIBS := $(DEPS)/host/lib/libyaml.a $(DEPS)/host/lib/libcjson.a $(DEPS)/host/lib/libbearssl.a
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(OBJ)/%.o)
# The app's migrations (schemas/migrations/NNN_name.sql), embedded by
# tools/migrations/embed for `service --migrate`: main.c refers to them.
MIGRATIONS  ?= $(dir $(SCHEMA))migrations
# The app's queries (QUERIES/*.sql), compiled into $(GEN)/queries.c below.
QUERIES ?= $(dir $(SCHEMA))queries
QUERIES_GEN := $(if $(wildcard $(QUERIES)/*.sql),$(GEN)/queries.c)
APP_GEN_SRC := $(GEN)/api.c $(GEN)/migrations.c $(GEN)/build_info.c $(QUERIES_GEN)
APP_OWN_OBJ := $(patsubst $(APP_DIR)%.c,$(APP_OBJDIR)/%.o,$(APP_SRCS))
APP_OBJ     := $(APP_OWN_OBJ) $(API_MAIN_OBJ) $(APP_OBJDIR)/gen/api.o $(APP_OBJDIR)/gen/migrations.o \
               $(APP_OBJDIR)/gen/build_info.o $(if $(QUERIES_GEN),$(APP_OBJDIR)/gen/queries.o)

# ---- trust anchors (tools/anchors): generated from Debian's ca-certificates ----
# A host tool reads the package's mozilla/ directory (fetched by tools/deps,
# version in tools/deps/deps.lock) and writes both forms of net/tls/anchors.h
# into $(RT_GEN)/anchors.c, a member of the runtime's archive: a binary with
# the outbound client links it, and --gc-sections keeps only the form its TLS
# backend refers to. The ASan build compiles RUNTIME_SRC itself.
ANCHORS_TOOL := $(BUILD)/tools/anchors
ANCHORS_DIR  := $(DEPS)/src/ca-certificates/tree/mozilla
RUNTIME_OBJ  += $(OBJ)/gen/anchors.o
RUNTIME_SRC  += $(RT_GEN)/anchors.c
# These rules come before `all`; a bare `make` must still mean `make all`.
.DEFAULT_GOAL := all

# The DNs are packed with schemac's ig_lz packer and checked with the
# runtime's unpacker.
ANCHORS_TOOL_SRC := tools/anchors/anchors.c kernel/runtime/file.c kernel/runtime/lz.c tools/schemac/lz_pack.c
$(ANCHORS_TOOL): $(ANCHORS_TOOL_SRC) kernel/runtime/file.h kernel/runtime/lz.h tools/schemac/lz_pack.h net/tls/anchors.h $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_HOST) $(WARN) -O2 -I. -Iinclude -I$(DEPS)/host/include $(ANCHORS_TOOL_SRC) $(DEPS)/host/lib/libbearssl.a -o $@

$(RT_GEN)/anchors.c: $(ANCHORS_TOOL) $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  ANCHORS $@")
	$(Q)$(ANCHORS_TOOL) $(ANCHORS_DIR) $@ >$(RT_GEN)/anchors.txt

$(OBJ)/gen/anchors.o: $(RT_GEN)/anchors.c net/tls/anchors.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC_MUSL) $(CFLAGS) -c $< -o $@

.PHONY: lwip lwip-asan pgwire-check
.PHONY: app-test
.PHONY: all deps deps-lock gen bin test-api app-test app-test-build lambda unikernel unikernel-elf unikernel-tls device-check fetch fetch-asan clientbench pgcheck natscheck natscheck-asan pgcheck-asan asan unit-build fuzz fuzz-build image boot run stop test bench \
        bench-tools schemac-asan conformance-tools clean distclean setup-build setup-run setup-test setup-image setup-bench
all: bin

# ---- third-party sources (Debian source packages, built with musl) ----
$(DEPS)/.stamp: tools/deps/fetch tools/deps/deps.lock tools/deps/mbedtls_config.h net/lwip/lwipopts.h net/lwip/arch/cc.h
	BUILD=$(BUILD) tools/deps/fetch
deps: $(DEPS)/.stamp
$(LIBS): $(DEPS)/.stamp
deps-lock:
	BUILD=$(BUILD) tools/deps/fetch --lock

# ---- schema compiler (host tool) and generated code ----
$(SCHEMAC_LIBC_NAMES): tools/schemac/libc-names tools/schemac/api_includes.h $(wildcard kernel/*/*.h net/*.h net/*/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)tools/schemac/libc-names "$(CC_MUSL)" $@
$(BUILD)/schemac: $(SCHEMAC_SRC) $(wildcard tools/schemac/*.h) kernel/runtime/file.h kernel/runtime/cron_expr.h $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_HOST) $(WARN) -O2 -I. -Iinclude -I$(DEPS)/host/include $(SCHEMAC_SRC) $(SCHEMAC_LIBS) -lm -o $@

$(GEN)/api.c $(GEN)/api.h &: $(BUILD)/schemac $(SCHEMA)
	@mkdir -p $(GEN)
	@$(if $(Q),echo "  SCHEMAC $(SCHEMA)")
	$(Q)$(BUILD)/schemac $(SCHEMA) $(GEN)
gen: $(GEN)/api.c $(GEN)/migrations.c $(QUERIES_GEN)

# The app's queries (QUERIES/*.sql, sqlc's annotations): schemac --queries
# describes them on a throwaway database of the local PostgreSQL made from
# MIGRATIONS (tools/make/queries, which skips PostgreSQL when the hash of
# the inputs is the one recorded beside its output). A bad query fails the
# build. queries.o is linked with the app's objects (APP_OBJ), and
# queries.c compiled with its sources by the ASan and test builds
# (APP_GEN_SRC); the app's objects wait for queries.h.
$(GEN)/queries.c $(GEN)/queries.h &: $(BUILD)/schemac tools/make/queries $(SCHEMA) $(wildcard $(QUERIES) $(QUERIES)/*.sql $(MIGRATIONS) $(MIGRATIONS)/*.sql) | setup-build
	@mkdir -p $(GEN)
	@$(if $(Q),echo "  QUERIES $(QUERIES)")
	$(Q)BUILD=$(BUILD) tools/make/queries $(BUILD)/schemac $(SCHEMA) $(QUERIES) $(MIGRATIONS) $(GEN)
$(APP_OBJDIR)/gen/queries.o: $(GEN)/queries.c $(GEN)/queries.h $(GEN)/api.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC_MUSL) $(CFLAGS) -c $< -o $@

# The directory is a prerequisite too: a file added or removed changes it.
EMBED_MIGRATIONS := $(BUILD)/tools/embed-migrations
$(EMBED_MIGRATIONS): tools/migrations/embed.c kernel/runtime/file.c kernel/runtime/file.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_HOST) $(WARN) -O2 -I. -Iinclude $< kernel/runtime/file.c -o $@
$(GEN)/migrations.c: $(EMBED_MIGRATIONS) $(wildcard $(MIGRATIONS) $(MIGRATIONS)/*.sql)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  EMBED   $(MIGRATIONS)")
	$(Q)$(EMBED_MIGRATIONS) $(MIGRATIONS) $@

# What the binary was built from (include/ingot/version.h): looked at on
# every make, the file rewritten only when it changes (the commit, the tree
# turning dirty), so that only then the binary is relinked.
$(GEN)/build_info.c: FORCE
	@mkdir -p $(@D)
	$(Q)tools/make/build-info $@ $(CURDIR) $(APP_DIR)
FORCE:
.PHONY: FORCE

# ---- the service ----
# V=1 shows the full commands.
Q := $(if $(V),,@)

$(OBJ)/%.o: %.c $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC_MUSL) $(CFLAGS) -MMD -MP -c $< -o $@

$(APP_OBJDIR)/gen/api.o: $(GEN)/api.c $(GEN)/api.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC_MUSL) $(CFLAGS) -MMD -MP -c $< -o $@

$(APP_OBJDIR)/gen/build_info.o: $(GEN)/build_info.c include/ingot/version.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC_MUSL) $(CFLAGS) -c $< -o $@

$(APP_OBJDIR)/gen/migrations.o: $(GEN)/migrations.c net/pg/migrate.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC_MUSL) $(CFLAGS) -c $< -o $@

$(APP_OWN_OBJ): $(APP_OBJDIR)/%.o: $(APP_DIR)%.c $(GEN)/api.h $(if $(QUERIES_GEN),$(GEN)/queries.h) $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC_MUSL) $(CFLAGS) -MMD -MP -c $< -o $@

# An app links the runtime as an archive: only the parts its code calls
# come in (net/start.c refers to the optional ones weakly), so a binary
# whose app makes no query and no outbound call has no database client,
# resolver, TLS client nor trust anchors.
RUNTIME_LIB := $(OBJ)/libingot.a
# A thin archive: its members keep their paths, which net/cold.ld's
# patterns match (and three conn.o stay apart).
$(RUNTIME_LIB): $(RUNTIME_OBJ)
	@rm -f $@
	$(Q)ar rcsT $@ $^
# An app with migrations links their runner (net/api/main.c refers to it
# weakly), and with it the database client, whether or not its code queries.
APP_LINK_FLAGS := $(if $(wildcard $(MIGRATIONS)/*.sql),-u ig_migrate_main)
# Every operation has its handler among the app's own objects: a missing
# one is named with its prototype (tools/make/check-handlers) before a
# link would say only "undefined reference to ig_op_<id>".
HANDLERS_OK := $(APP_OBJDIR)/handlers.ok
$(HANDLERS_OK): $(GEN)/api.h $(APP_OWN_OBJ) tools/make/check-handlers
	$(Q)tools/make/check-handlers $(GEN)/api.h $(APP_OWN_OBJ)
	@touch $@
# BIN.map, the link map, says what each part costs and what was left out.
$(BIN) $(BIN).map &: $(APP_OBJ) $(RUNTIME_LIB) $(LIBS) $(LAYOUT) | $(HANDLERS_OK)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $(BIN)")
	$(Q)$(CC_MUSL) $(LDFLAGS) $(APP_LINK_FLAGS) -Wl,-Map,$(BIN).map $(filter-out %.ld,$^) $(APP_LDLIBS) -o $(BIN)
	@echo "built $(BIN) ($$(stat -c %s $(BIN)) bytes)"

bin: setup-build $(BIN) $(BIN).map

# Programs built on the runtime without the app: the test client CLI
# (tests/client/fetch.c) and the client benchmark (tools/bench/clientbench.c).
FETCH       := $(BUILD)/bin/fetch$(TLS_SUFFIX)
CLIENTBENCH := $(BUILD)/bin/clientbench$(TLS_SUFFIX)
$(FETCH): tests/client/fetch.c $(RUNTIME_OBJ) $(LIBS) $(LAYOUT)
$(CLIENTBENCH): tools/bench/clientbench.c $(RUNTIME_OBJ) $(LIBS) $(LAYOUT)
# The PostgreSQL client's test driver (tests/pg/pgcheck.c, pg_client.test.mjs).
PGCHECK     := $(BUILD)/bin/pgcheck$(TLS_SUFFIX)
$(PGCHECK): tests/pg/pgcheck.c $(RUNTIME_OBJ) $(LIBS) $(LAYOUT)
# The NATS client's test driver (tests/nats/natscheck.c, nats_client.test.mjs).
NATSCHECK   := $(BUILD)/bin/natscheck
$(NATSCHECK): tests/nats/natscheck.c $(RUNTIME_OBJ) $(LIBS) $(LAYOUT)
$(FETCH) $(CLIENTBENCH) $(PGCHECK) $(NATSCHECK):
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_MUSL) $(CFLAGS) $(LDFLAGS) $(filter-out %.ld,$^) -o $@
fetch: setup-build $(FETCH)
clientbench: setup-build $(CLIENTBENCH)
pgcheck: setup-build $(PGCHECK)
natscheck: setup-build $(NATSCHECK)

# ---- lwIP (net/lwip): ingot's own TCP/IP stack, selected by INGOT_NET ----
# build/bin/service-lwip is the service's objects plus net/lwip and lwIP
# itself (tools/deps); build/bin/service links neither: net/stack_settings.c
# refers to net/lwip's ops table weakly. The unikernel links LWIP_SRC's
# objects and LWIP_LIBS the same way.
LWIP_SRC   := $(wildcard net/lwip/*.c)
LWIP_LIBS  := $(DEPS)/musl/lib/liblwip.a
LWIP_FLAGS := -Inet/lwip -I$(DEPS)/musl/include/lwip
LWIP_OBJ   := $(LWIP_SRC:%.c=$(OBJ)/%.o)
LWIP_BIN   := $(BUILD)/bin/service$(TLS_SUFFIX)-lwip
$(LWIP_OBJ): CFLAGS += $(LWIP_FLAGS)
$(LWIP_OBJ): $(wildcard net/lwip/*.h net/lwip/arch/*.h)
$(LWIP_LIBS): $(DEPS)/.stamp
$(LWIP_BIN): $(APP_OBJ) $(LWIP_OBJ) $(RUNTIME_LIB) $(LIBS) $(LWIP_LIBS) $(LAYOUT) | $(HANDLERS_OK)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC_MUSL) $(LDFLAGS) $(APP_LINK_FLAGS) $(filter-out %.ld,$^) $(APP_LDLIBS) -o $@
	@echo "built $@ ($$(stat -c %s $@) bytes)"
lwip: setup-build $(LWIP_BIN)

# The same under ASan and UBSan with the host compiler, lwIP's host build
# (sanitized too, tools/deps) included.
LWIP_ASAN_BIN := $(BUILD)/bin/service$(TLS_SUFFIX)-lwip-asan
$(LWIP_ASAN_BIN): $(RUNTIME_SRC) $(APP_SRC) $(LWIP_SRC) $(APP_GEN_SRC) $(GEN)/api.h $(DEPS)/.stamp \
		$(wildcard kernel/runtime/*.h kernel/process/*.h net/*.h net/*/*.h net/lwip/arch/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@ (ASan+UBSan)")
	$(Q)$(CC_HOST) $(WARN) -DIG_CHECK_RESPONSES -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer -I. -Iinclude -I$(GEN) -I$(DEPS)/host/include -Inet/lwip -I$(DEPS)/host/include/lwip \
		$(HOST_TLS_FLAGS) $(RUNTIME_SRC) $(APP_SRC) $(LWIP_SRC) $(APP_GEN_SRC) $(HOST_TLS_LIBS) \
		$(DEPS)/host/lib/libbearssl.a $(DEPS)/host/lib/liblwip.a -lm -lpthread -o $@
lwip-asan: setup-build $(LWIP_ASAN_BIN)

# The same service built with the host compiler under ASan and UBSan (they
# do not link against musl), for running the integration tests against.
ASAN_BIN       := $(BUILD)/bin/service$(TLS_SUFFIX)-asan
HOST_TLS_LIBS  := $(subst /musl/,/host/,$(TLS_LIBS))
HOST_TLS_FLAGS := $(if $(filter mbedtls,$(TLS)),-DMBEDTLS_CONFIG_FILE='<ingot_mbedtls_config.h>')
$(ASAN_BIN): $(RUNTIME_SRC) $(APP_SRC) $(APP_GEN_SRC) $(GEN)/api.h $(DEPS)/.stamp $(wildcard kernel/runtime/*.h kernel/process/*.h net/*.h net/*/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@ (ASan+UBSan)")
	$(Q)$(CC_HOST) $(WARN) -DIG_CHECK_RESPONSES -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer -I. -Iinclude -I$(GEN) -I$(DEPS)/host/include $(HOST_TLS_FLAGS) \
		$(RUNTIME_SRC) $(APP_SRC) $(APP_GEN_SRC) $(HOST_TLS_LIBS) $(DEPS)/host/lib/libbearssl.a -lm -lpthread -o $@
asan: $(ASAN_BIN)

# The test client CLI under the sanitizers, for tests/client/engine.test.mjs.
FETCH_ASAN := $(BUILD)/bin/fetch$(TLS_SUFFIX)-asan
$(FETCH_ASAN): tests/client/fetch.c
fetch-asan: $(FETCH_ASAN)

# pgcheck (net/pg's driver) under the sanitizers: pg_client.test.mjs runs
# it too (INGOT_PGCHECK_BIN).
PGCHECK_ASAN := $(BUILD)/bin/pgcheck$(TLS_SUFFIX)-asan
$(PGCHECK_ASAN): tests/pg/pgcheck.c
pgcheck-asan: $(PGCHECK_ASAN)
# natscheck (net/nats's driver) the same way: nats_client.test.mjs runs it
# too (INGOT_NATSCHECK_BIN).
NATSCHECK_ASAN := $(BUILD)/bin/natscheck-asan
$(NATSCHECK_ASAN): tests/nats/natscheck.c
natscheck-asan: $(NATSCHECK_ASAN)
# Each of those: the whole runtime and its one program (the tests/ source
# named above), for the host.
$(FETCH_ASAN) $(PGCHECK_ASAN) $(NATSCHECK_ASAN): $(RUNTIME_SRC) $(DEPS)/.stamp $(wildcard kernel/runtime/*.h kernel/process/*.h net/*.h net/*/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@ (ASan+UBSan)")
	$(Q)$(CC_HOST) $(WARN) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
		-I. -Iinclude -I$(GEN) -I$(DEPS)/host/include $(HOST_TLS_FLAGS) $(RUNTIME_SRC) $(filter tests/%.c,$^) \
		$(HOST_TLS_LIBS) $(DEPS)/host/lib/libbearssl.a -lm -lpthread -o $@

# net/pg's wire, types and auth against a real PostgreSQL without the
# connection engine, for tests/integration/pg_wire.test.mjs (ASan+UBSan).
PGWIRE_CHECK := $(BUILD)/bin/pgwire_check
$(PGWIRE_CHECK): tests/pg/pgwire_check.c net/pg/wire.c net/pg/types.c net/pg/writer.c net/pg/auth.c kernel/runtime/base64.c kernel/runtime/arena.c kernel/runtime/pool.c \
		$(wildcard net/pg/*.h) $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@ (ASan+UBSan)")
	$(Q)$(CC_HOST) $(WARN) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
		-I. -Iinclude -I$(DEPS)/host/include $(filter %.c,$^) $(DEPS)/host/lib/libbearssl.a -lm -o $@
pgwire-check: $(PGWIRE_CHECK)

# ---- unit tests: each built twice, under ASan and UBSan with the host
# compiler and as a static musl binary (the shipped toolchain), into
# build/test/unit/NAME.asan and .musl; tests/run runs them. They mirror the
# tree: tests/unit/FOLDER/test_X.c tests FOLDER's X.c (or a small group
# named after it), and its NAME is its path under tests/unit
# (net/http/test_parser). Each links its own source, FOLDER/X.c when there
# is one, and UNIT_SRC_NAME, what else it needs; UNIT_MAIN_NAME replaces
# the test file (net/tls/test_tls.c is built against each backend);
# UNIT_FLAGS_NAME: extra flags, with @DEPS@ standing for the host or the
# musl build of the third-party libraries.
UNIT_OUT   := $(BUILD)/test/unit
UNIT_FILES := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/*/test_*.c tests/unit/*/*/test_*.c))
UNIT_NAMES := $(filter-out net/tls/test_tls,$(UNIT_FILES)) net/tls/test_tls_bearssl net/tls/test_tls_mbedtls
UNIT_WARN  := $(WARN) -I. -Iinclude -g
API_JSON   := kernel/runtime/json_read.c kernel/runtime/json_value.c kernel/runtime/arena.c kernel/runtime/pool.c
HTTP_CODEC := net/http/codec.c net/http/chunked.c
# Handler tests without sockets (include/ingot/testing.h): what a test binary links
# beside its test file, the app's handlers and its generated code
# (build/gen/api.c): the runtime with BearSSL and the test API, not the
# service's main. TEST_API_LIB holds them compiled for the host under
# ASan+UBSan once (make test-api), for every app's `make test`; link it
# with TEST_API_LDLIBS and compile the app's files with TEST_API_CFLAGS.
# Every header a test object may include: defined before the rules that
# list it (make expands a rule's prerequisites as it reads the rule).
UNIT_HEADERS := $(wildcard include/ingot/*.h kernel/*/*.h net/*.h net/*/*.h tests/*.h tests/unit/*.h tests/unit/*/*/*.h)
TEST_API_SRC    := $(filter-out $(TLS_BACKENDS),$(RUNTIME_SRC)) net/tls/bearssl.c $(TEST_API_MAIN)
TEST_API_SAN    := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
TEST_API_CFLAGS := $(UNIT_WARN) $(TEST_API_SAN) -I$(abspath .) -I$(abspath include) -I$(abspath $(DEPS))/host/include
TEST_API_LDLIBS := $(abspath $(DEPS))/host/lib/libbearssl.a -lpthread -lm
TEST_API_LIB    := $(BUILD)/test/libingot-test.a
TEST_API_OBJ    := $(TEST_API_SRC:%.c=$(BUILD)/obj-test/%.o)
$(BUILD)/obj-test/%.o: %.c $(UNIT_HEADERS) $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (ASan+UBSan)")
	$(Q)$(CC_HOST) $(TEST_API_CFLAGS) -c $< -o $@
$(TEST_API_LIB): $(TEST_API_OBJ)
	@mkdir -p $(@D) && rm -f $@
	$(Q)ar rcs $@ $^
test-api: $(TEST_API_LIB)
# An app's tests (APP_TESTS: tests/*.c in its directory): each a program of
# its own on the test API, linked with the app's handlers and generated
# code (compiled with TEST_API_CFLAGS) and TEST_API_LIB, built once here
# and shared by every app. `app-test` builds and runs them. Its generated
# code checks every response against the document (IG_CHECK_RESPONSES, as
# the reference service's ASan build): a body off its schema is a 500 and
# an error line, so the test that expected the answer fails.
APP_TESTS     ?=
APP_TEST_OUT  := $(APP_BUILD)/test
APP_TEST_BINS := $(patsubst $(APP_DIR)tests/%.c,$(APP_TEST_OUT)/%,$(APP_TESTS))
$(APP_TEST_BINS): $(APP_TEST_OUT)/%: $(APP_DIR)tests/%.c $(APP_SRCS) $(GEN)/api.c $(GEN)/api.h $(QUERIES_GEN) $(TEST_API_LIB) \
		| $(HANDLERS_OK)
	@mkdir -p $(@D) && rm -f $@
	@$(if $(Q),echo "  CC/LD   $@ (ASan+UBSan)")
	$(Q)$(CC_HOST) $(TEST_API_CFLAGS) -DIG_CHECK_RESPONSES -I$(GEN) $< $(APP_SRCS) $(GEN)/api.c $(QUERIES_GEN) $(TEST_API_LIB) $(APP_TEST_LDLIBS) \
		$(TEST_API_LDLIBS) -o $@
app-test-build: setup-build $(APP_TEST_BINS)
# An app with migrations: the tests get DATABASE_URL, a database migrated
# by the app's binary (tools/pg-local test: a throwaway one on the local
# cluster, or DATABASE_URL's); app.mk builds the binary for it.
app-test: app-test-build
	@if [ -n "$(wildcard $(MIGRATIONS)/*.sql)" ]; then \
		BUILD=$(BUILD) PG_LOCAL_DB=$(APP_NAME) tools/pg-local test $(BIN) $(APP_TEST_BINS); \
	else \
		for t in $(APP_TEST_BINS); do echo "test: $$t"; $$t || exit 1; done; \
	fi
# The reference service's handler tests: the same sources, with app/.
UNIT_SRC_app/test_handlers := $(TEST_API_SRC) $(wildcard app/*.c) $(GEN)/api.c $(GEN)/queries.c
UNIT_FLAGS_app/test_handlers := -I$(GEN) -I@DEPS@/include @DEPS@/lib/libbearssl.a -lpthread
UNIT_SRC_net/lambda/test_lambda := $(UNIT_SRC_app/test_handlers)
# The linear database calls, on the test core with an app of its own.
UNIT_SRC_net/pg/test_linear := $(TEST_API_SRC)
UNIT_FLAGS_net/pg/test_linear := -I@DEPS@/include @DEPS@/lib/libbearssl.a -lpthread
UNIT_SRC_net/http/test_wait_release := $(TEST_API_SRC)
UNIT_FLAGS_net/http/test_wait_release := $(UNIT_FLAGS_net/pg/test_linear)
UNIT_SRC_net/http/test_task := $(TEST_API_SRC)
UNIT_FLAGS_net/http/test_task := $(UNIT_FLAGS_net/pg/test_linear)
UNIT_FLAGS_net/lambda/test_lambda := $(UNIT_FLAGS_app/test_handlers)
UNIT_SRC_net/lambda/test_api_call := net/lambda/post_blocking.c net/http/response_head.c $(HTTP_CODEC) \
                                $(addprefix kernel/runtime/,loop.c timer.c clock.c json.c arena.c pool.c)
UNIT_SRC_net/api/test_validate := net/api/validate.c kernel/runtime/json.c $(API_JSON)
UNIT_SRC_net/api/test_decode   := net/api/decode.c net/api/validate.c kernel/runtime/json.c $(API_JSON)
UNIT_SRC_net/api/test_rate_table := net/http/client_addr.c
UNIT_FLAGS_net/api/test_rate_table := -lpthread
UNIT_SRC_net/api/test_operation := net/api/operation.c net/api/rate_limit.c net/api/rate_table.c net/http/client_addr.c \
                               net/http/cors.c net/api/check.c net/http/redact.c net/api/validate.c kernel/runtime/json.c kernel/runtime/log.c \
                               kernel/runtime/clock.c $(API_JSON)
UNIT_SRC_net/client/test_mock  := kernel/runtime/loop.c kernel/runtime/timer.c kernel/runtime/clock.c kernel/runtime/arena.c kernel/runtime/pool.c \
                              $(addprefix net/client/,request.c retry.c redirect.c mock.c interceptors.c errors.c url.c)
UNIT_SRC_net/dns/test_dns          := $(wildcard net/dns/dns*.c) net/stack_kernel.c net/sock/sock.c \
                              $(addprefix kernel/runtime/,config.c file.c loop.c timer.c clock.c pool.c log.c json.c arena.c)
# the dialer over kernel sockets, with the real resolver (TLS stubbed)
UNIT_SRC_net/dial/test_dial   := net/sock/sock.c net/stack_kernel.c $(wildcard net/dns/dns*.c) \
                              $(addprefix kernel/runtime/,config.c file.c loop.c timer.c clock.c pool.c log.c json.c arena.c)
UNIT_SRC_net/api/test_format       := net/api/format.c $(API_JSON) kernel/runtime/file.c
UNIT_SRC_kernel/runtime/test_json_read    := $(API_JSON) kernel/runtime/file.c
UNIT_SRC_net/pubsub/test_nats_partition := $(API_JSON)
# The packing side is schemac's (host code): the test checks the two agree.
UNIT_SRC_kernel/runtime/test_lz := tools/schemac/lz_pack.c kernel/runtime/file.c
UNIT_SRC_net/lwip/test_net_config  := net/lwip/net_config.c
UNIT_SRC_net/sock/test_sock         := net/sock/sock.c kernel/runtime/loop.c kernel/runtime/timer.c kernel/runtime/clock.c kernel/runtime/pool.c kernel/runtime/log.c kernel/runtime/json.c kernel/runtime/arena.c
UNIT_SRC_net/test_stack_kernel     := net/sock/sock.c kernel/runtime/loop.c kernel/runtime/timer.c kernel/runtime/clock.c kernel/runtime/pool.c kernel/runtime/log.c kernel/runtime/json.c kernel/runtime/arena.c
UNIT_SRC_kernel/runtime/test_json  := kernel/runtime/arena.c kernel/runtime/pool.c
UNIT_SRC_kernel/runtime/test_arena := kernel/runtime/pool.c
UNIT_SRC_kernel/runtime/test_membudget := kernel/runtime/membudget.c
UNIT_SRC_kernel/runtime/test_config := kernel/runtime/file.c kernel/runtime/log.c kernel/runtime/json.c kernel/runtime/clock.c kernel/runtime/arena.c kernel/runtime/pool.c
UNIT_SRC_kernel/runtime/test_log_ring := $(UNIT_SRC_kernel/runtime/test_config)
UNIT_FLAGS_kernel/runtime/test_log_ring := -lpthread
UNIT_SRC_kernel/runtime/test_loop  := kernel/runtime/timer.c kernel/runtime/clock.c
UNIT_FLAGS_kernel/runtime/test_coro := -lpthread
UNIT_SRC_kernel/process/test_fatal := kernel/runtime/coro.c kernel/runtime/log.c kernel/runtime/json.c kernel/runtime/clock.c \
                              kernel/runtime/arena.c kernel/runtime/pool.c
UNIT_SRC_net/http/test_parser       := net/http/parser.c $(HTTP_CODEC)
UNIT_SRC_net/http/test_response_head     := net/http/response_head.c $(HTTP_CODEC)
UNIT_SRC_net/http/test_trace        := net/http/trace.c net/http/parser.c kernel/runtime/rng.c kernel/runtime/clock.c kernel/runtime/arena.c kernel/runtime/pool.c \
                              $(HTTP_CODEC)
UNIT_MAIN_net/tls/test_tls_bearssl := tests/unit/net/tls/test_tls.c
UNIT_SRC_net/tls/test_tls_bearssl  := net/tls/bearssl.c net/tls/peer_name.c net/tls/anchors.c $(RT_GEN)/anchors.c kernel/runtime/lz.c
UNIT_FLAGS_net/tls/test_tls_bearssl := -I@DEPS@/include @DEPS@/lib/libbearssl.a -lpthread
UNIT_MAIN_net/tls/test_tls_mbedtls := tests/unit/net/tls/test_tls.c
UNIT_SRC_net/tls/test_tls_mbedtls  := net/tls/mbedtls.c net/tls/peer_name.c $(RT_GEN)/anchors.c
UNIT_FLAGS_net/tls/test_tls_mbedtls := -DMBEDTLS_CONFIG_FILE='<ingot_mbedtls_config.h>' -I@DEPS@/include \
                               @DEPS@/lib/libmbedtls.a @DEPS@/lib/libmbedx509.a @DEPS@/lib/libmbedcrypto.a -lpthread
UNIT_SRC_net/client/test_url          := net/client/url.c
# net/ws: RFC 6455's frames and handshake, with BearSSL's SHA-1 and the
# JSON reader's UTF-8 check
UNIT_SRC_net/ws/test_ws   := net/ws/frame.c net/ws/handshake.c kernel/runtime/base64.c $(API_JSON)
UNIT_FLAGS_net/ws/test_ws := -I@DEPS@/include @DEPS@/lib/libbearssl.a
# net/auth: the JWT core with BearSSL and the JSON reader; test_jwt also
# checks the tokens tests/integration/jwt_jose.test.mjs mints with jose.
AUTH_SRC := net/auth/jwt.c net/auth/jwks.c net/auth/base64url.c net/auth/token_cache.c $(API_JSON)
UNIT_SRC_net/auth/test_jwt         := $(AUTH_SRC) kernel/runtime/base64.c
UNIT_SRC_net/auth/test_base64url   := kernel/runtime/base64.c
UNIT_FLAGS_net/auth/test_jwt       := -I@DEPS@/include @DEPS@/lib/libbearssl.a
UNIT_SRC_net/auth/test_jwks        := $(AUTH_SRC) net/auth/auth_settings.c $(addprefix kernel/runtime/,file.c log.c json.c clock.c)
UNIT_FLAGS_net/auth/test_jwks      := -I@DEPS@/include @DEPS@/lib/libbearssl.a
UNIT_SRC_net/auth/test_token_cache := $(AUTH_SRC)
UNIT_FLAGS_net/auth/test_token_cache := -I@DEPS@/include @DEPS@/lib/libbearssl.a
# net/api's door over a stand-in exchange, with net/auth's verify
UNIT_SRC_net/api/test_security := net/api/security.c net/api/params.c $(HTTP_CODEC) net/api/auth_metrics.c net/api/rate_limit.c net/api/rate_table.c net/http/client_addr.c $(AUTH_SRC) kernel/runtime/base64.c kernel/runtime/log.c kernel/runtime/json.c \
                               kernel/runtime/clock.c
UNIT_FLAGS_net/api/test_security := -I@DEPS@/include @DEPS@/lib/libbearssl.a
# net/api's key fetcher over stand-ins for the client, timers and net/auth
UNIT_SRC_net/api/test_jwks_remote := net/api/jwks_remote.c $(API_JSON)
# tools/bench/jwtbench: net/auth's verify and cache-hit cost (not a test),
# static musl at -O2 (the service builds all but the cache at -Os).
JWTBENCH := $(BUILD)/bin/jwtbench
$(JWTBENCH): tools/bench/jwtbench.c $(AUTH_SRC) $(wildcard net/auth/*.h) $(DEPS)/.stamp
	@mkdir -p $(@D)
	$(Q)$(CC_MUSL) $(WARN) -O2 -static -I. -Iinclude -I$(DEPS)/musl/include $< $(AUTH_SRC) $(DEPS)/musl/lib/libbearssl.a -lm -o $@
jwtbench: $(JWTBENCH)
UNIT_SRC_kernel/metal/test_i8042        := kernel/metal/i8042.c kernel/metal/ioapic.c
UNIT_SRC_kernel/metal/test_virtio_mmio  := kernel/metal/virtio_mmio.c kernel/metal/virtqueue.c
UNIT_SRC_kernel/metal/test_virtqueue    := kernel/metal/virtqueue.c
UNIT_SRC_kernel/metal/test_cmdline := kernel/metal/cmdline.c
UNIT_SRC_kernel/metal/test_pages  := kernel/metal/pages.c
UNIT_SRC_kernel/metal/test_pvclock := kernel/metal/pvclock.c
UNIT_SRC_kernel/metal/test_cpio := kernel/metal/cpio.c
UNIT_SRC_kernel/metal/test_acpi := kernel/metal/acpi.c
UNIT_SRC_kernel/metal/test_console := kernel/metal/console.c
UNIT_SRC_net/metrics/test_metrics      := $(wildcard net/metrics/*.c) kernel/runtime/json.c kernel/runtime/arena.c kernel/runtime/pool.c kernel/runtime/clock.c
UNIT_SRC_net/http/test_meter        := net/http/meter.c net/metrics/histogram.c
UNIT_SRC_net/http/test_cors         := net/http/cors.c net/http/cors_settings.c
UNIT_SRC_net/http/test_hooks        := net/http/hooks.c net/http/security_headers.c net/http/hooks_settings.c \
                                   $(addprefix kernel/runtime/,arena.c pool.c json.c)
UNIT_SRC_net/http/test_error_log    := $(addprefix kernel/runtime/,log.c timer.c clock.c json.c arena.c pool.c)
UNIT_SRC_net/client/test_client_metrics := net/client/client_metrics.c net/client/errors.c net/http/meter.c $(wildcard net/metrics/*.c) \
                              kernel/runtime/clock.c kernel/runtime/json.c kernel/runtime/arena.c kernel/runtime/pool.c
PG_WIRE := net/pg/wire.c net/pg/types.c net/pg/writer.c kernel/runtime/arena.c kernel/runtime/pool.c
UNIT_SRC_net/pg/test_wire      := $(PG_WIRE)
UNIT_SRC_net/pg/test_types     := $(PG_WIRE)
UNIT_SRC_net/pg/test_value_text := net/pg/value_text.c $(PG_WIRE)
UNIT_SRC_net/pg/test_array     := net/pg/array.c net/pg/value_text.c kernel/runtime/json.c $(PG_WIRE)
UNIT_SRC_net/pg/test_auth      := net/pg/auth.c kernel/runtime/base64.c
UNIT_FLAGS_net/pg/test_auth    := -I@DEPS@/include @DEPS@/lib/libbearssl.a
UNIT_SRC_net/pg/test_conninfo  := net/pg/conninfo.c
UNIT_SRC_net/pg/test_errors    := $(addprefix kernel/runtime/,log.c log_ring.c clock.c json.c arena.c pool.c)
# conn and pool against the test's simulated server: all of net/pg but its
# settings and migrations (the test sets what they would), on a real loop.
UNIT_SRC_net/pg/test_conn      := $(filter-out net/pg/pg_settings.c net/pg/migrate.c net/pg/linear.c,$(wildcard net/pg/*.c)) net/dial/dial.c net/sock/sock.c \
                              $(addprefix kernel/runtime/,loop.c timer.c clock.c pool.c arena.c log.c base64.c json.c)
UNIT_FLAGS_net/pg/test_conn    := -I@DEPS@/include @DEPS@/lib/libbearssl.a
unit_main = $(or $(UNIT_MAIN_$(1)),tests/unit/$(1).c)
# The test's own source: FOLDER/NAME.c for tests/unit/FOLDER/test_NAME.c.
unit_own = $(wildcard $(dir $(1))$(patsubst test_%,%,$(notdir $(1))).c)
unit_src = $(sort $(call unit_own,$(1)) $(UNIT_SRC_$(1)))

# A failed build leaves no binary behind (rm first), so a stale one never runs.
.SECONDEXPANSION:
$(UNIT_OUT)/%.asan: $$(call unit_main,$$*) $$(call unit_src,$$*) $(UNIT_HEADERS) $(DEPS)/.stamp
	@mkdir -p $(@D) && rm -f $@
	@$(if $(Q),echo "  CC/LD   $@ (ASan+UBSan)")
	$(Q)$(CC_HOST) $(UNIT_WARN) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
		$(call unit_main,$*) $(call unit_src,$*) $(subst @DEPS@,$(DEPS)/host,$(UNIT_FLAGS_$*)) -lm -o $@
$(UNIT_OUT)/%.musl: $$(call unit_main,$$*) $$(call unit_src,$$*) $(UNIT_HEADERS) $(DEPS)/.stamp
	@mkdir -p $(@D) && rm -f $@
	@$(if $(Q),echo "  CC/LD   $@ (musl)")
	$(Q)$(CC_MUSL) $(UNIT_WARN) -O2 -static \
		$(call unit_main,$*) $(call unit_src,$*) $(subst @DEPS@,$(DEPS)/musl,$(UNIT_FLAGS_$*)) -lm -o $@
unit-build: $(foreach n,$(UNIT_NAMES),$(UNIT_OUT)/$(n).asan $(UNIT_OUT)/$(n).musl)

# ---- the schema compiler's tests: programs that tools/schemac/test/run,
# tools/schemac/test/regex/run and tests/conformance/run build through these
# rules from what they generate (their inputs are the compiler's output, so
# the scripts run schemac first and then ask for the target).
SAN_FLAGS   := $(WARN) -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
SCHEMAC_ASAN := $(BUILD)/tools/schemac-asan
$(SCHEMAC_ASAN): $(SCHEMAC_SRC) $(wildcard tools/schemac/*.h) kernel/runtime/file.h $(DEPS)/.stamp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@ (ASan+UBSan)")
	$(Q)$(CC_HOST) $(SAN_FLAGS) -I. -Iinclude -I$(DEPS)/host/include $(SCHEMAC_SRC) $(SCHEMAC_LIBS) -lm -o $@
schemac-asan: $(SCHEMAC_ASAN)

# tools/schemac/test/run: the reference service's api.c and app/service.c
# with the shipped toolchain; rich.json's api.c under stricter warnings,
# and linked with the stand-in runtime (and the real helpers it uses).
SCHEMAC_TEST := $(BUILD)/test/schemac
# The door (net/api/security.c, its metrics, its key fetcher) needs net/auth and a real
# core: rich.json declares no security, so the stand-in runtime leaves it out.
API_DOOR := net/api/security.c net/api/auth_metrics.c net/api/jwks_remote.c
SCHEMAC_TEST_RUNTIME := tools/schemac/test/mock_runtime.c kernel/runtime/json.c kernel/runtime/json_read.c kernel/runtime/json_value.c \
                        kernel/runtime/log.c kernel/runtime/clock.c kernel/runtime/lz.c net/http/codec.c net/http/cors.c \
                        net/http/client_addr.c net/http/redact.c $(filter-out $(API_MAIN) $(API_DOOR),$(wildcard net/api/*.c))
SCHEMAC_STRICT := -std=c11 -Wall -Wextra -Werror -Wpedantic -Wshadow -Wconversion -Wsign-conversion \
                  -Wmissing-prototypes -Wno-overlength-strings
$(SCHEMAC_TEST)/musl/api.o: $(SCHEMAC_TEST)/service/api.c $(DEPS)/.stamp
	@mkdir -p $(@D)
	$(Q)$(CC_MUSL) $(WARN) -O2 -I. -Iinclude -I$(DEPS)/musl/include -I$(SCHEMAC_TEST)/service -c $< -o $@
$(SCHEMAC_TEST)/musl/service.o: app/service.c $(SCHEMAC_TEST)/service/api.c $(DEPS)/.stamp
	@mkdir -p $(@D)
	$(Q)$(CC_MUSL) $(WARN) -O2 -I. -Iinclude -I$(DEPS)/musl/include -I$(SCHEMAC_TEST)/service -c $< -o $@
# The generated code must stay clean under these; the embedded document is
# one literal longer than ISO C's 4095 minimum.
$(SCHEMAC_TEST)/strict/api.o $(SCHEMAC_TEST)/strict/api-check.o: $(SCHEMAC_TEST)/rich/api.c
	@mkdir -p $(@D)
	$(Q)$(CC_HOST) $(SCHEMAC_STRICT) $(if $(findstring check,$(@F)),-DIG_CHECK_RESPONSES) -I. -Iinclude \
		-I$(SCHEMAC_TEST)/rich -c $< -o $@
$(SCHEMAC_TEST)/rich-run $(SCHEMAC_TEST)/rich-check: $(SCHEMAC_TEST)/rich/api.c tools/schemac/test/rich_handlers.c \
		$(SCHEMAC_TEST_RUNTIME) $(UNIT_HEADERS)
	@mkdir -p $(@D) && rm -f $@
	$(Q)$(CC_HOST) $(SAN_FLAGS) $(if $(findstring check,$(@F)),-DIG_CHECK_RESPONSES) -I. -Iinclude -I$(SCHEMAC_TEST)/rich \
		$(SCHEMAC_TEST)/rich/api.c tools/schemac/test/rich_handlers.c $(SCHEMAC_TEST_RUNTIME) -lm -o $@

# tools/schemac/test/run: the code schemac --queries wrote for the suite's
# queries, run against the local PostgreSQL through the callback form
# (tests/pg/query_roundtrip.c), with the api.c of the queries' document
# (its JSON decoders); its queries.h and api.h come first.
$(SCHEMAC_TEST)/query-roundtrip: tests/pg/query_roundtrip.c $(SCHEMAC_TEST)/queries/queries.c $(SCHEMAC_TEST)/queries/api.c \
		$(RUNTIME_OBJ) $(LIBS) $(LAYOUT)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_MUSL) -I$(SCHEMAC_TEST)/queries $(CFLAGS) $(LDFLAGS) $(filter-out %.ld,$^) -lm -o $@

$(SCHEMAC_TEST)/features-run $(SCHEMAC_TEST)/features-check: $(SCHEMAC_TEST)/features/api.c \
		tools/schemac/test/features_handlers.c $(SCHEMAC_TEST_RUNTIME) $(UNIT_HEADERS)
	@mkdir -p $(@D) && rm -f $@
	$(Q)$(CC_HOST) $(SAN_FLAGS) $(if $(findstring check,$(@F)),-DIG_CHECK_RESPONSES) -I. -Iinclude \
		-I$(SCHEMAC_TEST)/features $(SCHEMAC_TEST)/features/api.c tools/schemac/test/features_handlers.c \
		$(SCHEMAC_TEST_RUNTIME) -lm -o $@

# pubsub.yaml's publish calls, with a stand-in provider (pubsub_handlers.c).
$(SCHEMAC_TEST)/pubsub-run: $(SCHEMAC_TEST)/pubsub/api.c tools/schemac/test/pubsub_handlers.c \
		$(SCHEMAC_TEST_RUNTIME) $(UNIT_HEADERS)
	@mkdir -p $(@D) && rm -f $@
	$(Q)$(CC_HOST) $(SAN_FLAGS) -I. -Iinclude -I$(SCHEMAC_TEST)/pubsub $(SCHEMAC_TEST)/pubsub/api.c \
		tools/schemac/test/pubsub_handlers.c $(SCHEMAC_TEST_RUNTIME) -lm -o $@

# tools/schemac/test/regex/run: gen (the pattern compiler under the
# sanitizers) from extract.js's patterns, then the matchers gen writes,
# checked by check.c under the sanitizers and as static musl at -O2. -O0
# for the sanitizer builds: hundreds of generated matchers take gcc long
# to optimize.
REGEX_TEST := $(BUILD)/test/regex
REGEX_SCHEMAC_SRC ?= $(filter-out tools/schemac/main.c,$(SCHEMAC_SRC))
$(REGEX_TEST)/gen: tools/schemac/test/regex/gen.c $(REGEX_SCHEMAC_SRC) $(REGEX_TEST)/patterns.inc $(REGEX_TEST)/expect.inc
	@rm -f $@
	$(Q)$(CC_HOST) $(SAN_FLAGS) -O0 -I. -Iinclude -Itools/schemac -I$(REGEX_TEST) -I$(DEPS)/host/include $< $(REGEX_SCHEMAC_SRC) \
		$(SCHEMAC_LIBS) -lm -o $@
$(REGEX_TEST)/check: tools/schemac/test/regex/check.c $(REGEX_TEST)/matchers.c $(REGEX_TEST)/checks.inc
	@rm -f $@
	$(Q)$(CC_HOST) $(WARN) -fsanitize=address,undefined -fno-sanitize-recover=all -O0 -I$(REGEX_TEST) $< -o $@
$(REGEX_TEST)/check.musl: tools/schemac/test/regex/check.c $(REGEX_TEST)/matchers.c $(REGEX_TEST)/checks.inc
	@rm -f $@
	$(Q)$(CC_MUSL) $(WARN) -O2 -static -I$(REGEX_TEST) $< -o $@

# tests/conformance/run: a driver per suite file (the validators schemac
# --validator writes, #included), linked with the runtime parts they use.
# An archive, so the driver pulls in only what it calls.
CONFORMANCE_TEST := $(BUILD)/test/conformance
CONFORMANCE_RUNTIME_SRC := kernel/runtime/arena.c kernel/runtime/pool.c kernel/runtime/json.c \
                           kernel/runtime/json_read.c kernel/runtime/json_value.c net/api/format.c net/api/validate.c
CONFORMANCE_RUNTIME := $(CONFORMANCE_TEST)/runtime.a
$(CONFORMANCE_TEST)/runtime/%.o: %.c $(UNIT_HEADERS)
	@mkdir -p $(@D)
	$(Q)$(CC_HOST) $(SAN_FLAGS) -I. -Iinclude -c $< -o $@
$(CONFORMANCE_RUNTIME): $(CONFORMANCE_RUNTIME_SRC:%.c=$(CONFORMANCE_TEST)/runtime/%.o)
	@rm -f $@
	$(Q)ar rcs $@ $^
conformance-tools: $(SCHEMAC_ASAN) $(CONFORMANCE_RUNTIME)
$(CONFORMANCE_TEST)/%/driver: $(CONFORMANCE_TEST)/%/driver.c $$(wildcard $$(@D)/g*.c) $(CONFORMANCE_RUNTIME)
	@rm -f $@
	$(Q)$(CC_HOST) $(SAN_FLAGS) -O0 -Wno-unused-function -I. -Iinclude -I$(@D) $< $(CONFORMANCE_RUNTIME) -lm -o $@

# tests/anchors/run: static musl probes that refer to neither form of the
# trust anchors, to each, to both (probe-B-D: B the BearSSL form, D the DER
# form), for the bytes each adds; and test_anchors.c under the sanitizers.
ANCHORS_TEST  := $(BUILD)/test/anchors
ANCHORS_PROBES := $(foreach b,0 1,$(foreach d,0 1,$(ANCHORS_TEST)/probe-$(b)-$(d)))
ANCHORS_CFLAGS := $(WARN) -O2 -I. -Iinclude -I$(DEPS)/musl/include -ffunction-sections -fdata-sections
$(ANCHORS_TEST)/anchors.o: $(RT_GEN)/anchors.c net/tls/anchors.h
	@mkdir -p $(@D)
	$(Q)$(CC_MUSL) $(ANCHORS_CFLAGS) -c $< -o $@
$(ANCHORS_TEST)/probe-%: tests/anchors/probe.c $(ANCHORS_TEST)/anchors.o
	$(Q)$(CC_MUSL) $(ANCHORS_CFLAGS) -DUSE_BEARSSL_FORM=$(word 1,$(subst -, ,$*)) -DUSE_DER_FORM=$(word 2,$(subst -, ,$*)) \
		-static -Wl,--gc-sections -s $^ -o $@
$(ANCHORS_TEST)/test_anchors: tests/anchors/test_anchors.c $(RT_GEN)/anchors.c net/tls/anchors.c kernel/runtime/lz.c net/tls/anchors.h $(DEPS)/.stamp
	@mkdir -p $(@D)
	$(Q)$(CC_HOST) $(WARN) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
		-I. -Iinclude -I$(DEPS)/host/include -DMBEDTLS_CONFIG_FILE='<ingot_mbedtls_config.h>' $< $(RT_GEN)/anchors.c net/tls/anchors.c kernel/runtime/lz.c \
		$(DEPS)/host/lib/libmbedx509.a $(DEPS)/host/lib/libmbedcrypto.a $(DEPS)/host/lib/libbearssl.a -o $@

# ---- fuzzing (libFuzzer, host clang): each tests/fuzz/fuzz_NAME.c with its
# seed corpus tests/fuzz/NAME/. `make fuzz FUZZ_SECONDS=600` runs each that
# long; make test runs each for a fixed count of inputs.
FUZZ_SECONDS ?= 60
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_SRC_json_read := kernel/runtime/json_read.c kernel/runtime/json_value.c kernel/runtime/arena.c kernel/runtime/pool.c
FUZZ_SRC_cron_expr := kernel/runtime/cron_expr.c
$(BUILD)/fuzz/fuzz_cron_expr: $(FUZZ_SRC_cron_expr) kernel/runtime/cron_expr.h
FUZZ_SRC_response  := net/http/response_head.c net/http/codec.c net/http/chunked.c
$(BUILD)/fuzz/fuzz_response: $(FUZZ_SRC_response) net/http/response_head.h net/http/codec.h
FUZZ_SRC_parser    := net/http/parser.c $(HTTP_CODEC)
$(BUILD)/fuzz/fuzz_parser: $(FUZZ_SRC_parser) net/http/parser.h net/http/codec.h
FUZZ_SRC_dns       := net/dns/dns_wire.c
$(BUILD)/fuzz/fuzz_dns: $(FUZZ_SRC_dns) net/dns/dns_wire.h
FUZZ_SRC_jwt       := net/auth/jwt.c net/auth/jwks.c net/auth/base64url.c net/auth/token_cache.c kernel/runtime/base64.c \
                      kernel/runtime/json_read.c kernel/runtime/json_value.c kernel/runtime/arena.c kernel/runtime/pool.c
FUZZ_FLAGS_jwt     := -I$(DEPS)/host/include
FUZZ_LIBS_jwt      := $(DEPS)/host/lib/libbearssl.a
$(BUILD)/fuzz/fuzz_jwt: $(FUZZ_SRC_jwt) $(wildcard net/auth/*.h) tests/unit/net/auth/b64url.h $(DEPS)/.stamp
# The whole request path without the process's start and main (the
# target sets up a core itself and libFuzzer has the main), and pools
# wrapped so that every object is a malloc that ASan and LSan can see.
FUZZ_SRC_nats      := net/nats/proto.c
$(BUILD)/fuzz/fuzz_nats: $(FUZZ_SRC_nats) net/nats/proto.h
FUZZ_SRC_ws        := net/ws/frame.c $(API_JSON)
$(BUILD)/fuzz/fuzz_ws: $(FUZZ_SRC_ws) net/ws/frame.h
FUZZ_SRC_pg        := net/pg/wire.c net/pg/types.c net/pg/writer.c net/pg/auth.c kernel/runtime/base64.c net/pg/conninfo.c kernel/runtime/arena.c kernel/runtime/pool.c
FUZZ_FLAGS_pg      := -I$(DEPS)/host/include
FUZZ_LIBS_pg       := $(DEPS)/host/lib/libbearssl.a
$(BUILD)/fuzz/fuzz_pg: $(FUZZ_SRC_pg) $(wildcard net/pg/*.h) $(DEPS)/.stamp
FUZZ_SRC_http   := $(filter-out $(API_MAIN) $(TEST_API_MAIN),$(wildcard kernel/runtime/*.c kernel/process/*.c net/*.c net/http/*.c net/server/*.c net/metrics/*.c net/api/*.c)) \
                   $(wildcard app/*.c) $(GEN)/api.c $(QUERIES_GEN) $(wildcard net/sock/*.c net/dns/*.c net/dial/*.c net/client/*.c net/pg/*.c net/lambda/*.c net/cron/*.c net/pubsub/*.c net/nats/*.c net/auth/*.c net/ws/*.c) \
                   $(filter-out $(TLS_BACKENDS),$(wildcard net/tls/*.c)) net/tls/bearssl.c $(RT_GEN)/anchors.c
FUZZ_FLAGS_http := -I$(GEN) -I$(DEPS)/host/include \
                   -Wl,--wrap=ig_pool_take,--wrap=ig_pool_give
FUZZ_LIBS_http  := $(DEPS)/host/lib/libbearssl.a -lpthread
$(BUILD)/fuzz/fuzz_http: $(FUZZ_SRC_http) $(GEN)/api.h $(if $(QUERIES_GEN),$(GEN)/queries.h) $(DEPS)/.stamp $(wildcard net/*.h net/*/*.h) tests/harness.h
# The events and answers of net/lambda, with the runtime as fuzz_http has it
# (the answer's reason phrases come from the engine), pools unwrapped.
FUZZ_SRC_lambda   := $(FUZZ_SRC_http)
FUZZ_FLAGS_lambda := -I$(GEN) -I$(DEPS)/host/include
FUZZ_LIBS_lambda  := $(FUZZ_LIBS_http)
$(BUILD)/fuzz/fuzz_lambda: $(FUZZ_SRC_lambda) $(GEN)/api.h $(if $(QUERIES_GEN),$(GEN)/queries.h) $(DEPS)/.stamp $(wildcard net/*.h net/*/*.h)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard kernel/runtime/*.c kernel/runtime/*.h kernel/process/*.c net/api/*.c net/api/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I. -Iinclude $(FUZZ_FLAGS_$*) $< $(FUZZ_SRC_$*) $(FUZZ_LIBS_$*) -lm -o $@
fuzz-build: $(FUZZ_BINS)
fuzz: setup-test fuzz-build
	@for n in $(FUZZ_NAMES); do \
		mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		echo "fuzz: $$n for $(FUZZ_SECONDS) s (corpus $(BUILD)/fuzz/corpus-$$n)"; \
		$(BUILD)/fuzz/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			$(BUILD)/fuzz/corpus-$$n $$(if [ $$n = lambda ]; then echo tests/integration/lambda_events; else echo tests/fuzz/$$n; fi) || exit 1; \
	done

# ---- the unikernel (kernel/metal): the service's objects but kernel/process/vm.c,
# with the bare-metal platform under musl's libc.a instead of Linux, linked
# by kernel/metal/unikernel.ld into build/images/unikernel.elf (PVH entry).
# The platform is built without the red zone (interrupts and exceptions push
# onto the stack they arrive on) and with no stack protector (the FS base
# is set only by musl's start).
METAL_SRC   := $(wildcard kernel/metal/*.c)
METAL_ASM   := $(wildcard kernel/metal/*.S)
METAL_OBJ   := $(METAL_SRC:%.c=$(OBJ)/%.o) $(METAL_ASM:%.S=$(OBJ)/%.o)
UNIKERNEL   := $(APP_BUILD)/images/unikernel.elf
UNIKERNEL_LD := kernel/metal/unikernel.ld
# net/lwip's objects and lwIP itself (LWIP_OBJ, LWIP_LIBS: the lwIP rules).
# The runtime through its archive, as the service's link (only what the app
# calls); kernel/process/vm.o is never pulled from it: the platform defines its calls.
UNIKERNEL_OBJ = $(APP_OBJ) $(LWIP_OBJ) $(METAL_OBJ) $(RUNTIME_LIB)
$(METAL_OBJ): CFLAGS += -mno-red-zone
$(OBJ)/%.o: %.S
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC_MUSL) -I. -MMD -MP -c $< -o $@
# The kernel as linked (unikernel.kernel.elf, bootable by itself, its
# symbols kept for the packing below). -nostartfiles: the entry is
# boot.S's, and musl is entered by kernel/metal/libc_start.c; the specs
# still add musl's libc.a and libgcc.
UNIKERNEL_KERNEL = $(UNIKERNEL:.elf=.kernel.elf)
$(UNIKERNEL_KERNEL): $(UNIKERNEL_OBJ) $(LIBS) $(LWIP_LIBS) $(UNIKERNEL_LD) | $(HANDLERS_OK)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC_MUSL) -static -nostartfiles -Wl,-T,$(UNIKERNEL_LD) -Wl,--gc-sections -Wl,--build-id=none \
		-Wl,-z,max-page-size=4096 -Wl,-z,noexecstack $(APP_LINK_FLAGS) $(UNIKERNEL_OBJ) $(LIBS) $(LWIP_LIBS) \
		$(APP_LDLIBS) -o $@
# The image as it ships: the kernel's loaded bytes compressed (lz4's
# legacy format, its best level) behind images/unpack.S, the stub that the
# PVH loader enters and that writes them back where they were linked
# (README: the unikernel's image). The stub is linked at the kernel's end.
$(UNIKERNEL): KERNEL_BIN = $(UNIKERNEL_KERNEL:.elf=.bin)
$(UNIKERNEL): $(UNIKERNEL_KERNEL) images/unpack.S images/unpack.ld kernel/metal/cpu_bits.h
	@$(if $(Q),echo "  PACK    $@")
	$(Q)objcopy -O binary $< $(KERNEL_BIN)
	$(Q)lz4 -l -12 -f -q $(KERNEL_BIN) $(KERNEL_BIN:.bin=.lz4)
	$(Q)sym() { nm $< | awk -v n=$$1 '$$3 == n { print "0x" $$1 }'; }; \
	load=$$(sym __image_start) end=$$(sym __image_end) entry=$$(sym pvh_start32) told=$$(sym ig_metal_unpacked_end); \
	[ -n "$$load" ] && [ -n "$$end" ] && [ -n "$$entry" ] && [ -n "$$told" ] || { echo "$<: a symbol the packing needs is missing" >&2; exit 1; }; \
	bytes_end=$$(printf '0x%x' $$(( load + $$(stat -c %s $(KERNEL_BIN)) ))); \
	$(CC_HOST) -nostdlib -static -no-pie -s -Wl,--build-id=none -Wl,-z,max-page-size=4096 \
		-I. -Wl,-z,noexecstack -Wl,-T,images/unpack.ld -Wl,--defsym=KERNEL_LOAD=$$load -Wl,--defsym=KERNEL_END=$$end \
		-DPAYLOAD='"$(abspath $(KERNEL_BIN:.bin=.lz4))"' -DKERNEL_LOAD=$$load -DKERNEL_BYTES_END=$$bytes_end \
		-DKERNEL_END=$$end -DKERNEL_ENTRY=$$entry -DKERNEL_UNPACKED_END=$$told images/unpack.S -o $@
	@echo "built $@ ($$(stat -c %s $@) bytes; the kernel $$(stat -c %s $(KERNEL_BIN)) bytes unpacked)"
# images/qemu's KVM probe (images/kvm_probe.S), built beside the images it
# guards: a PVH kernel that runs one SSE instruction.
KVM_PROBE := $(APP_BUILD)/images/kvm-probe.elf
$(KVM_PROBE): images/kvm_probe.S kernel/metal/cpu_bits.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AS/LD   $@")
	$(Q)$(CC_HOST) -I. -nostdlib -static -no-pie -s -Wl,--build-id=none -Wl,-z,max-page-size=4096 \
		-Wl,-Ttext-segment=0x100000 -Wl,-e,probe_entry $< -o $@
# Without TLS by default (net/tls/none.c); the objects are then those of
# build/obj-notls.
UNIKERNEL_TLS ?= none
unikernel: setup-build
	@$(MAKE) --no-print-directory TLS=$(UNIKERNEL_TLS) unikernel-elf
unikernel-elf: $(UNIKERNEL) $(KVM_PROBE)
# The same with BearSSL (HTTPS): build/images/unikernel-tls.elf, for
# tests/integration/unikernel.test.mjs's HTTPS boots.
unikernel-tls: setup-build
	@$(MAKE) --no-print-directory TLS=bearssl UNIKERNEL=$(APP_BUILD)/images/unikernel-tls.elf unikernel-elf

# The device check (tests/metal/device_check.c): the platform's boot,
# console and power with the device drivers, and the check as
# ig_metal_start in place of entry.c; booted by
# tests/integration/metal_devices.test.mjs.
DEVICE_CHECK     := $(BUILD)/test/metal/device_check.elf
DEVICE_CHECK_OBJ := $(addprefix $(OBJ)/kernel/metal/,boot.o serial.o console.o power.o virtqueue.o virtio_mmio.o \
                    virtio_net.o ioapic.o i8042.o) $(OBJ)/tests/metal/device_check.o
$(OBJ)/tests/metal/device_check.o: CFLAGS += -mno-red-zone
$(DEVICE_CHECK): $(DEVICE_CHECK_OBJ) $(UNIKERNEL_LD)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC_MUSL) -static -nostartfiles -Wl,-T,$(UNIKERNEL_LD) -Wl,--gc-sections -Wl,--build-id=none \
		-Wl,-z,max-page-size=4096 -Wl,-z,noexecstack $(DEVICE_CHECK_OBJ) -o $@
device-check: setup-build $(DEVICE_CHECK)

# ---- packages (images/): the scratch OCI image, the bootable VM image ----
IMAGES       := $(APP_BUILD)/images
VMLINUX_TOOL := $(BUILD)/tools/vmlinux

$(VMLINUX_TOOL): tools/vmlinux/vmlinux.c kernel/runtime/file.c kernel/runtime/file.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_HOST) $(WARN) -O2 -I. -Iinclude $< kernel/runtime/file.c -o $@

# build/images/oci (OCI layout, tag latest) and IMAGE_NAME-docker.tar, titled
# IMAGE_NAME (ingot for the reference service, an app's name for an app),
# labelled with the revision of the checkout that holds the app's sources;
# beside them the Knative and Cloud Run service files for that image.
IMAGE_NAME ?= $(if $(APP_DIR),$(APP_NAME),ingot)
# With them, a Knative Eventing PingSource per x-ingot-cron job (schemac
# --cron-export: knative-pingsources.yaml; none without jobs).
image: setup-image bin
	@IMAGE_NAME=$(IMAGE_NAME) IMAGE_GIT_DIR=$(if $(APP_DIR),$(APP_DIR),$(CURDIR)) images/oci $(BIN) $(IMAGES) >/dev/null
	@images/manifests $(IMAGE_NAME) "$$($(BIN) --version | awk 'NR == 1 { print $$NF }')" $(IMAGES)
	@$(BUILD)/schemac --cron-export knative $(SCHEMA) $(IMAGE_NAME) $(IMAGES)

# build/images/lambda.zip: bootstrap (the binary) for provided.al2023; and
# beside it lambda-schedules/, an EventBridge Scheduler schedule (JSON, the
# input of CreateSchedule) per x-ingot-cron job.
lambda: setup-image bin
	@images/lambda $(BIN) $(IMAGES)
	@$(BUILD)/schemac --cron-export eventbridge $(SCHEMA) $(IMAGE_NAME) $(IMAGES)

# build/images/vmlinuz, initramfs.cpio.gz, vmlinux, ingot.iso; the kernel
# is fetched once into build/kernel/ (kept by make clean, like deps).
boot: setup-image bin $(VMLINUX_TOOL) $(KVM_PROBE)
	@BUILD=$(BUILD) VMLINUX_TOOL=$(VMLINUX_TOOL) images/boot $(BIN) $(IMAGES)

setup-build:
	@QUERIES=$(QUERIES) tools/setup build
setup-image:
	@tools/setup image
setup-run:
	@tools/setup run
setup-test:
	@tools/setup test
setup-bench:
	@tools/setup bench

# The admin listener on 9464, Prometheus exporters' usual port, unless
# INGOT_ADMIN_PORT says otherwise (-1: none). With a local database unless
# DATABASE_URL is set: tools/pg-local starts Debian's PostgreSQL (a cluster
# of its own under build/pg, as the postgres user, on a unix socket and a
# free loopback port), migrates it with --migrate, serves, and stops it when
# the service ends (if this run started it); `make stop` stops it too. An
# app's database is its own, named after it (PG_LOCAL_DB=APP_NAME); the
# reference service's is ingot, and its cron job heartbeat runs
# (HEARTBEAT_CRON=1 unless set). An app without migrations is served alone.
run: setup-run
	@$(MAKE) --no-print-directory bin
	@if [ -d $(MIGRATIONS) ]; then \
		INGOT_ADMIN_PORT=$${INGOT_ADMIN_PORT:-9464} BUILD=$(BUILD) $(if $(APP_DIR),PG_LOCAL_DB=$(APP_NAME),HEARTBEAT_CRON=$${HEARTBEAT_CRON:-1}) \
			exec tools/pg-local run $(BIN); \
	else \
		INGOT_ADMIN_PORT=$${INGOT_ADMIN_PORT:-9464} exec $(BIN); \
	fi
stop:
	@BUILD=$(BUILD) tools/pg-local stop

# Both TLS backends: every TLS test runs against each.
test: setup-test
	@$(MAKE) --no-print-directory bin fetch pgcheck natscheck pgcheck-asan natscheck-asan asan fetch-asan pgwire-check fuzz-build test-api image lambda boot unikernel unikernel-tls
	@$(MAKE) --no-print-directory lwip lwip-asan
	@$(MAKE) --no-print-directory TLS=mbedtls bin fetch pgcheck
	@$(MAKE) --no-print-directory TLS=none bin
	@tests/run

# The bench's own C programs, static musl like the service: the floor server
# (the fastest answer the machine gives) and the cold-start probe, the
# Lambda init probe and its floor (lambda_init.c, lambda_floor.c), the
# coroutine switch's cost (coro_switch.c), the streams bench's WebSocket
# and SSE client (wsload.c); and the floor of a VM's boot (floor_pvh.S), a
# PVH kernel that prints one line.
BENCH_TOOLS := $(BUILD)/tools/bench/floor $(BUILD)/tools/bench/coldstart $(BUILD)/tools/bench/floor-pvh.elf \
               $(BUILD)/tools/bench/lambda_init $(BUILD)/tools/bench/lambda_floor $(BUILD)/tools/bench/coro_switch \
               $(BUILD)/tools/bench/wsload
$(BUILD)/tools/bench/%: tools/bench/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_MUSL) -std=c11 -O2 -static -Wall -Wextra -Werror $< -o $@
# The coroutine switch's microbenchmark, on the runtime's own coro.c.
$(BUILD)/tools/bench/coro_switch: tools/bench/coro_switch.c kernel/runtime/coro.c kernel/runtime/coro.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC/LD   $@")
	$(Q)$(CC_MUSL) $(WARN) -O2 -static -I. -Iinclude $< kernel/runtime/coro.c -o $@
$(BUILD)/tools/bench/floor-pvh.elf: tools/bench/floor_pvh.S
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AS/LD   $@")
	$(Q)$(CC_HOST) -nostdlib -static -no-pie -s -Wl,--build-id=none -Wl,-z,max-page-size=4096 \
		-Wl,-Ttext-segment=0x100000 -Wl,-e,floor_entry $< -o $@
bench-tools: setup-build $(BENCH_TOOLS)

# The door bench app (tools/bench/door: issue 28's cost of a JWT and a
# rate limit, tools/bench/auth.js) and the Pub/Sub one (tools/bench/pubsub:
# issue 29, tools/bench/pubsub.js) are built as any app is, by their own make.
bench: setup-bench
	@$(MAKE) --no-print-directory bin clientbench bench-tools jwtbench image boot unikernel unikernel-tls lwip
	@$(MAKE) --no-print-directory -C tools/bench/door
	@$(MAKE) --no-print-directory -C tools/bench/pubsub
	@$(MAKE) --no-print-directory TLS=mbedtls bin
	@tools/bench/run
	@images/measure

# clean: everything built, whichever TLS backend, but the third-party
# dependencies (build/deps) and the fetched kernel (build/kernel), which
# take minutes to fetch and build again; distclean: those too.
clean:
	rm -rf $(BUILD)/obj $(BUILD)/obj-mbedtls $(BUILD)/obj-notls $(BUILD)/obj-test $(GEN) $(BUILD)/bin $(BUILD)/schemac $(BUILD)/test $(BUILD)/fuzz \
		$(BUILD)/bench $(IMAGES) $(BUILD)/tools tools/bench/door/build tools/bench/pubsub/build
distclean: clean
	rm -rf $(BUILD)

# `make -s print-VAR` prints a list the scripts need (UNIT_NAMES, FUZZ_NAMES).
print-%:
	@echo $($*)

-include $(shell find $(OBJ) $(APP_OBJDIR) -name '*.d' 2>/dev/null)
