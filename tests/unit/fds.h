/* How many file descriptors the test process has open, for the checks
 * that a part leaves no socket behind: the entries of /proc/self/fd
 * (the directory's own descriptor and "." and ".." included, the same
 * at every call). -1 without /proc. */
#ifndef TESTS_UNIT_FDS_H
#define TESTS_UNIT_FDS_H

#include <dirent.h>

static inline int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#endif
