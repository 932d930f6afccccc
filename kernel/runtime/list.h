/* The two intrusive lists the runtime keeps: a doubly-linked list of live
 * objects (removal from anywhere in O(1)) and a singly-linked FIFO with a
 * tail pointer. Macros, so that any struct with `prev`/`next` (or only
 * `next`) fields can be a node without a cast; head and tail are lvalues
 * of the node's pointer type. Arguments are evaluated more than once: pass
 * plain variables and fields, nothing with side effects. */
#ifndef KERNEL_LIST_H
#define KERNEL_LIST_H

#include <stddef.h>

/* Puts node first in the list at head. */
#define IG_DLIST_PUSH(head, node)                   \
	do {                                        \
		(node)->prev = NULL;                \
		(node)->next = (head);              \
		if ((head) != NULL)                 \
			(head)->prev = (node);      \
		(head) = (node);                    \
	} while (0)

/* Takes node out of the list at head; its own links are left as they were. */
#define IG_DLIST_REMOVE(head, node)                         \
	do {                                                \
		if ((node)->prev != NULL)                   \
			(node)->prev->next = (node)->next;  \
		else                                        \
			(head) = (node)->next;              \
		if ((node)->next != NULL)                   \
			(node)->next->prev = (node)->prev;  \
	} while (0)

/* Appends node to the FIFO [head .. tail]. */
#define IG_FIFO_PUSH(head, tail, node)          \
	do {                                    \
		(node)->next = NULL;            \
		if ((tail) != NULL)             \
			(tail)->next = (node);  \
		else                            \
			(head) = (node);        \
		(tail) = (node);                \
	} while (0)

/* Takes the first node out of the FIFO [head .. tail], its next link
 * cleared; the expression's value is that node, or NULL when the FIFO is
 * empty. (A GNU statement expression: gcc and clang, as the build.) */
#define IG_FIFO_POP(head, tail)                                    \
	({                                                         \
		__typeof__(head) fifo_first_ = (head);             \
		if (fifo_first_ != NULL) {                         \
			(head) = fifo_first_->next;                \
			if ((head) == NULL)                        \
				(tail) = NULL;                     \
			fifo_first_->next = NULL;                  \
		}                                                  \
		fifo_first_;                                       \
	})

#endif
