/* Unit tests of net/pubsub/nats_partition.c: a key's partition depends on
 * its value alone (not the other members, their order, white space or a
 * string's escapes), is pinned (FNV-1a: the same in every build, so a
 * redeploy keeps a key's partition), spreads keys over every partition,
 * and is 0 for a message without the key. */
#include "net/pubsub/nats_partition.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <string.h>

static struct ig_pool blocks;
static ig_arena arena;

static uint32_t part(const char *member, const char *json)
{
	ig_arena_reset(&arena);
	return ig_pubsub_nats_partition(&arena, member, (ig_str){ json, strlen(json) });
}

static void test_value_alone(void)
{
	uint32_t a = part("key", "{\"key\":\"a\",\"seq\":1}");
	CHECK_INT(part("key", "{\"seq\":2,\"key\":\"a\"}"), a, "another member, another order");
	CHECK_INT(part("key", " { \"key\" : \"a\" } "), a, "white space");
	CHECK_INT(part("key", "{\"key\":\"\\u0061\"}"), a, "an escape is its character");
	CHECK_INT(part("key", "{\"x\":{\"key\":\"b\"},\"key\":\"a\"}"), a, "a nested member of the name is not the key");
	CHECK_INT(part("id", "{\"id\": 42 }"), part("id", "{\"id\":42}"), "an integer: its digits");
}

static void test_pinned(void)
{
	/* FNV-1a 32 of the bytes, modulo 16 */
	CHECK_INT(part("key", "{\"key\":\"a\"}"), 12, "\"a\"");
	CHECK_INT(part("key", "{\"key\":\"order-7\"}"), 11, "\"order-7\"");
	CHECK_INT(part("id", "{\"id\":42}"), 3, "42");
}

static void test_spread(void)
{
	unsigned seen[IG_NATS_PARTITIONS] = { 0 };
	for (int i = 0; i < 1000; i++) {
		char json[64];
		snprintf(json, sizeof json, "{\"key\":\"customer-%d\"}", i);
		uint32_t k = part("key", json);
		if (!check_that(k < IG_NATS_PARTITIONS, "a partition in range", "%u", k))
			return;
		seen[k]++;
	}
	for (unsigned k = 0; k < IG_NATS_PARTITIONS; k++)
		check_that(seen[k] >= 1000 / IG_NATS_PARTITIONS / 2, "each partition gets its share",
			   "partition %u: %u of 1000 keys", k, seen[k]);
}

static void test_without_key(void)
{
	CHECK_INT(part("key", "{\"seq\":1}"), 0, "no such member");
	CHECK_INT(part("key", "[\"key\",\"a\"]"), 0, "not an object");
	CHECK_INT(part("key", "{\"key\":"), 0, "cut JSON");
	CHECK_INT(part("key", ""), 0, "nothing");
	CHECK_INT(part("key", "{\"key\":\"\"}"), 0, "an empty string");
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 16, 1000);
	ig_arena_init(&arena, &blocks, 1 << 20);
	test_value_alone();
	test_pinned();
	test_spread();
	test_without_key();
	return check_done();
}
