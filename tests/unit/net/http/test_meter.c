/* Unit tests of net/http/meter.c: the bounded label values (methods,
 * statuses), the series table's look-ups as the scrape makes them, and the
 * overflow series once the table is full. */
#include "net/http/meter.h"
#include "tests/unit/check.h"

static uint32_t key(uint32_t route, uint32_t method, uint32_t status)
{
	return route << 16 | method << 12 | status;
}

static void test_methods(void)
{
	CHECK_INT(ig_http_method_index(IG_STR("GET"), false), 0, "method: GET");
	CHECK_INT(ig_http_method_index(IG_STR("GET"), true), 1, "method: HEAD (routed as GET)");
	CHECK_INT(ig_http_method_index(IG_STR("PATCH"), false), 8, "method: PATCH");
	CHECK_INT(ig_http_method_index(IG_STR("DELETE"), false), 4, "method: DELETE");
	bool each = true;
	for (uint32_t i = 0; i < HTTP_METHODS - 1; i++)
		each &= ig_http_method_index((ig_str){ ig_http_method_names[i], strlen(ig_http_method_names[i]) }, false) == i;
	CHECK(each, "method: every standard method's name gives its own index");
	CHECK_INT(ig_http_method_index(IG_STR("GETS"), false), HTTP_METHODS - 1, "method: a longer name is _OTHER");
	CHECK_INT(ig_http_method_index(IG_STR("FOO"), false), HTTP_METHODS - 1, "method: unknown is _OTHER");
	CHECK_INT(ig_http_method_index(IG_STR("get"), false), HTTP_METHODS - 1, "method: case matters (get is not GET)");
	CHECK_INT(ig_http_method_index((ig_str){ "", 0 }, false), HTTP_METHODS - 1, "method: empty is _OTHER");
	CHECK(strcmp(ig_http_method_names[HTTP_METHODS - 1], "_OTHER") == 0, "method: the last name is _OTHER");
}

static void test_series(void)
{
	struct http_meter m;
	ig_http_meter_init(&m, 0);
	CHECK(m.series != NULL && m.cap == 64, "init: no routes still gets the minimum table");
	ig_http_meter_request(&m, 0, 0, 404, 50, 0, 10);
	ig_http_meter_request(&m, 0, 0, 404, 70, 0, 10);
	ig_http_meter_request(&m, 0, 0, 999, 70, 0, 10); /* out of range: status 0 */
	CHECK_INT(ig_http_meter_published(&m), 2, "series: one per distinct key");
	const struct http_series *s = ig_http_meter_find(&m, key(0, 0, 404));
	CHECK(s && ig_counter_get(&s->duration.count) == 2 && ig_counter_get(&s->duration.sum_micro) == 120,
	      "find: the scrape sees both observations");
	CHECK(ig_http_meter_find(&m, key(0, 0, 0)) != NULL, "status out of 100-599: one series, status 0 (_OTHER)");
	CHECK(ig_http_meter_find(&m, key(0, 0, 200)) == NULL, "find: an unseen key is absent");
	for (uint32_t st = 100; st < 200; st++)
		ig_http_meter_request(&m, 0, 2, (int)st, 1, 0, 0);
	CHECK_INT(ig_http_meter_published(&m), m.cap, "full: the table does not grow");
	const struct http_series *o = ig_http_meter_find(&m, HTTP_SERIES_OVERFLOW);
	/* 2 taken before, cap - 3 more keyed, the rest overflow */
	CHECK(o && o->key == HTTP_SERIES_OVERFLOW && ig_counter_get(&o->duration.count) == 100 - (m.cap - 3),
	      "full: every further series counts in the overflow series");
	CHECK(ig_http_meter_find(&m, key(0, 2, 100)) != NULL && ig_http_meter_find(&m, key(0, 2, 199)) == NULL,
	      "full: the first keys stay, later ones are only in the overflow");
	ig_http_meter_request(&m, 0, 0, 404, 1, 0, 0);
	CHECK_INT(ig_counter_get(&ig_http_meter_find(&m, key(0, 0, 404))->duration.count), 3,
		  "full: a known series still counts in its own entry");
	ig_http_meter_error(&m, 431);
	ig_http_meter_error(&m, 299);
	CHECK(ig_counter_get(&m.errors[5]) == 1 && ig_counter_get(&m.errors[HTTP_ERROR_STATUSES - 1]) == 1,
	      "errors: a listed status in its slot, any other in the last");
	struct http_meter big;
	ig_http_meter_init(&big, 12);
	CHECK_INT(big.cap, 13 * 32, "init: 32 series per route and one for no route");
}

int main(void)
{
	test_methods();
	test_series();
	return check_done();
}
