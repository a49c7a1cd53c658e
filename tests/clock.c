/*
 * clock.c: prints CLOCK_MONOTONIC in nanoseconds, for the logs of
 * tests/galera-faults.sh: the times of the executions of a job, taken by
 * different processes, compared by its checker. The wall clock may step;
 * this one does not, and is the same for every process of the machine.
 */
#include <stdio.h>
#include <time.h>

int
main(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 1;
	printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	return 0;
}
