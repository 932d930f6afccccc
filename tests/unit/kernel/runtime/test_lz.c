/* The ig_lz format (kernel/runtime/lz.c unpacks, tools/schemac/lz_pack.c
 * packs): round trips over the repo's OpenAPI documents and random inputs
 * of every kind (incompressible, runs, repeats far back), the token
 * bounds, and malformed input refused without reading or writing out of
 * bounds. Run from the repository root. */
#include "kernel/runtime/file.h"
#include "kernel/runtime/lz.h"
#include "tools/schemac/lz_pack.h"
#include "tests/unit/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Packs and unpacks in; true when the bytes come back exactly, into a
   buffer of exactly their size. *packed_len: the packed size. */
static bool round_trip(const unsigned char *in, size_t len, size_t *packed_len)
{
	unsigned char *p = NULL;
	size_t plen = sc_lz_pack(in, len, &p);
	if (plen == (size_t)-1)
		return false;
	unsigned char *out = malloc(len ? len : 1);
	bool ok = ig_lz_unpack(out, len, p, plen) == len && memcmp(out, in, len) == 0;
	/* One byte short of room: refused, not overrun. */
	if (ok && len)
		ok = ig_lz_unpack(out, len - 1, p, plen) == (size_t)-1;
	if (packed_len)
		*packed_len = plen;
	free(out);
	free(p);
	return ok;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

static void test_documents(void)
{
	static const char *const docs[] = {
		"schemas/service.json", "tests/apps/todo/openapi.json", "tools/schemac/test/rich.json",
		"tools/schemac/test/plain_names.json", "tools/schemac/test/yaml_features.json",
	};
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		size_t len = 0, plen = 0;
		char err[256];
		char *doc = ig_read_file(docs[i], 1 << 22, 0, &len, err, sizeof err);
		check_that(doc != NULL, docs[i], "%s", err);
		if (!doc)
			continue;
		bool ok = round_trip((const unsigned char *)doc, len, &plen);
		check_that(ok, docs[i], "packed and unpacked: the same bytes");
		/* Under three quarters for any of them (the reference service's
		   document: under a third): the format earns its keep. */
		check_that(plen * 4 < len * 3, docs[i], "%zu bytes packed to %zu", len, plen);
		free(doc);
	}
}

static void test_random(void)
{
	bool all = true;
	unsigned char *buf = malloc(200000);
	for (int round = 0; round < 300 && all; round++) {
		size_t len = round < 20 ? (size_t)round : rnd() % (round % 10 == 0 ? 200000 : 3000);
		int kind = round % 4;
		for (size_t i = 0; i < len; i++) {
			if (kind == 0) /* incompressible */
				buf[i] = (unsigned char)rnd();
			else if (kind == 1) /* few symbols: short matches everywhere */
				buf[i] = (unsigned char)("ab{}"[rnd() % 4]);
			else if (kind == 2) /* long runs: overlapping matches */
				buf[i] = i && rnd() % 50 ? buf[i - 1] : (unsigned char)rnd();
			else /* copies from far back, past the longest distance too */
				buf[i] = i > 70000 && rnd() % 8 ? buf[i - 70000 + rnd() % 10] : (unsigned char)(rnd() % 16);
		}
		if (!round_trip(buf, len, NULL)) {
			check_that(false, "random inputs round-trip", "round %d, kind %d, %zu bytes", round, kind, len);
			all = false;
		}
	}
	if (all)
		check_that(true, "random inputs round-trip", "300 inputs, up to 200000 bytes");
	free(buf);
}

static void test_tokens(void)
{
	unsigned char out[300];
	/* A literal of 128, then a match of 130 at distance 1 (overlapping). */
	unsigned char in[1 + 128 + 3];
	in[0] = 0x7f;
	memset(in + 1, 'x', 128);
	in[129] = 0xff, in[130] = 1, in[131] = 0;
	CHECK_INT(ig_lz_unpack(out, sizeof out, in, sizeof in), 258, "the longest literal and match");
	CHECK(out[0] == 'x' && out[257] == 'x', "an overlapping match repeats the byte");
	/* Malformed: each is refused. */
	static const unsigned char trunc_lit[] = { 0x05, 'a', 'b' };
	CHECK(ig_lz_unpack(out, sizeof out, trunc_lit, sizeof trunc_lit) == (size_t)-1, "a literal past the end");
	static const unsigned char trunc_match[] = { 0x00, 'a', 0x80, 1 };
	CHECK(ig_lz_unpack(out, sizeof out, trunc_match, sizeof trunc_match) == (size_t)-1, "a match without its distance");
	static const unsigned char far[] = { 0x00, 'a', 0x80, 2, 0 };
	CHECK(ig_lz_unpack(out, sizeof out, far, sizeof far) == (size_t)-1, "a distance before the start");
	static const unsigned char zero[] = { 0x00, 'a', 0x80, 0, 0 };
	CHECK(ig_lz_unpack(out, sizeof out, zero, sizeof zero) == (size_t)-1, "a distance of 0");
	static const unsigned char room[] = { 0x00, 'a', 0x80, 1, 0 };
	CHECK(ig_lz_unpack(out, 3, room, sizeof room) == (size_t)-1, "a match past the room");
	CHECK_INT(ig_lz_unpack(out, 4, room, sizeof room), 4, "a match that fits exactly");
	CHECK_INT(ig_lz_unpack(out, 0, room, 0), 0, "nothing unpacks to nothing");
}

int main(void)
{
	test_documents();
	test_random();
	test_tokens();
	return check_done();
}
