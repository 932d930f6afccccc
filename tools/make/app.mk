# tools/make/app.mk: the make fragment of an app outside ingot's tree.
# An app is a directory with its OpenAPI document (openapi.yaml or
# openapi.json), its handlers (*.c), an optional migrations/, queries/
# (*.sql, typed queries: README, "Typed queries"; the build then needs a
# local PostgreSQL, which tools/setup build installs) and tests/ (*.c,
# handler tests) and a Makefile of a few lines:
#     INGOT_ROOT ?= /path/to/ingot     (the scaffold records it)
#     SRCS   := handlers.c             (default: every *.c here)
#     NAME   := hello                  (optional; default: info.title,
#                                       lowercase, dashes for the rest)
#     LDLIBS :=                        (optional: libraries to link)
#     TEST_LDLIBS :=                   (optional: the handler tests' own,
#                                       host-built libraries; default LDLIBS)
#     include $(INGOT_ROOT)/tools/make/app.mk
# Every target runs ingot's own Makefile with the app's paths (APP_*), so
# an app is built, linked and packaged by the very rules that build the
# reference service: the runtime's objects and dependencies are built once
# under ingot's build/ and shared (TLS backend as ingot's: TLS=...); the
# app's generated code, objects, binary (build/bin/NAME), tests and images
# (build/images) go to the app's build/.
# It lives in tools/ with the build's other helpers: it is part of the
# build, not of the runtime that kernel/ and net/ hold.

INGOT_ROOT := $(abspath $(or $(INGOT_ROOT),$(dir $(lastword $(MAKEFILE_LIST)))../..))
APP_HOME   := $(CURDIR)
# make splits words on spaces: a path with one would name other files.
ifneq ($(words $(APP_HOME)),1)
$(error the app's directory "$(APP_HOME)" has a space in its path; make cannot build there: move it)
endif
ifneq ($(words $(INGOT_ROOT)),1)
$(error ingot's directory "$(INGOT_ROOT)" has a space in its path; make cannot build there: move it)
endif
APP_DOC    := $(firstword $(wildcard $(APP_HOME)/openapi.yaml $(APP_HOME)/openapi.json))
ifeq ($(APP_DOC),)
$(error $(APP_HOME) has no openapi.yaml or openapi.json)
endif
SRCS       ?= $(wildcard *.c)

INGOT_MAKE = $(MAKE) --no-print-directory -C $(INGOT_ROOT) APP_DIR=$(APP_HOME)/ APP_BUILD=$(APP_HOME)/build \
	SCHEMA=$(APP_DOC) MIGRATIONS=$(APP_HOME)/migrations APP_SRCS='$(abspath $(SRCS))' \
	APP_TESTS='$(abspath $(wildcard tests/*.c))' APP_LDLIBS='$(LDLIBS)' \
	APP_TEST_LDLIBS='$(if $(filter undefined,$(origin TEST_LDLIBS)),$(LDLIBS),$(TEST_LDLIBS))'

# Builds share ingot's build/ (its runtime objects, libraries and tools):
# two apps built at once would write the same files. Every build step
# holds this lock; serving and running tests do not.
INGOT_LOCK = mkdir -p $(INGOT_ROOT)/build && flock $(INGOT_ROOT)/build/.apps.lock

# ingot's targets with the app's name (NAME, else the title the generated
# code carries, so the document is read by schemac alone, YAML or JSON):
# $(1), the build, under the lock, then $(2), if any, without it.
define app_target
name='$(NAME)'; \
if [ -z "$$name" ]; then \
	$(INGOT_LOCK) $(INGOT_MAKE) gen && \
	name=$$(sed -n 's/^\t\.name = "\(.*\)",$$/\1/p' build/gen/api.c | tr 'A-Z' 'a-z' | \
		sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$$//') || exit 1; \
fi; \
$(INGOT_LOCK) $(INGOT_MAKE) APP_NAME="$$name" $(1) && \
{ [ -z '$(2)' ] || $(INGOT_MAKE) APP_NAME="$$name" $(2); }
endef

.DEFAULT_GOAL := all
.PHONY: all run test image lambda boot unikernel clean
all:
	+@$(call app_target,bin)
# Serves build/bin/NAME (PORT, INGOT_* as the reference service); with a
# migrations/ directory on a local PostgreSQL, as ingot's `make run`.
run:
	+@$(call app_target,bin,run)
# The app's tests/*.c, each under ASan and UBSan; with migrations, against
# a database the app's binary migrated (ingot's tools/pg-local test).
test:
	+@$(call app_target,app-test-build$(if $(wildcard migrations/*.sql), bin setup-run),app-test)
image lambda boot unikernel:
	+@$(call app_target,$@)
clean:
	rm -rf build
