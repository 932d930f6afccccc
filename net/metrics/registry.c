/* The sources a scrape writes: a list built at startup (before the loops
 * run, so the scrape on core 0 reads it without synchronisation) and
 * walked in registration order. */
#include "metrics.h"

static struct ig_metrics_source *sources;

void ig_metrics_register(struct ig_metrics_source *s)
{
	struct ig_metrics_source **p = &sources;
	for (; *p; p = &(*p)->next)
		if (*p == s)
			return; /* registered already (a test that starts twice) */
	s->next = NULL;
	*p = s;
}

void ig_metrics_write(ig_wbuf *out)
{
	struct ig_expo e = { out };
	for (struct ig_metrics_source *s = sources; s; s = s->next)
		s->write(&e, s->arg);
}
