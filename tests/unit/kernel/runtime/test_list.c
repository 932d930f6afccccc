/* kernel/runtime/list.h's FIFO: what IG_FIFO_PUSH appends, IG_FIFO_POP
 * takes off in the same order, each node's link cleared, head and tail
 * both NULL once empty (so a push after a pop to empty starts again). */
#include "kernel/runtime/list.h"
#include "tests/unit/check.h"

#include <stddef.h>

struct node {
	struct node *next;
	int value;
};

int main(void)
{
	struct node n[4] = { { NULL, 1 }, { NULL, 2 }, { NULL, 3 }, { NULL, 4 } };
	struct node *head = NULL, *tail = NULL;
	CHECK(IG_FIFO_POP(head, tail) == NULL && head == NULL && tail == NULL, "fifo: an empty pop is NULL");
	for (int i = 0; i < 3; i++)
		IG_FIFO_PUSH(head, tail, &n[i]);
	struct node *a = IG_FIFO_POP(head, tail);
	struct node *b = IG_FIFO_POP(head, tail);
	CHECK(a == &n[0] && b == &n[1] && a->next == NULL && b->next == NULL && head == &n[2] && tail == &n[2],
	      "fifo: first in, first out, links cleared");
	struct node *c = IG_FIFO_POP(head, tail);
	CHECK(c == &n[2] && head == NULL && tail == NULL, "fifo: the last pop empties head and tail");
	IG_FIFO_PUSH(head, tail, &n[3]);
	CHECK(head == &n[3] && tail == &n[3] && IG_FIFO_POP(head, tail) == &n[3] && head == NULL,
	      "fifo: a push after emptying starts again");
	return check_done();
}
