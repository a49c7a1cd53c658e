/*
 * token.c: lease tokens. Each claim writes a fresh 128-bit random token;
 * a receipt is only as unguessable as this is, so it comes from the
 * kernel's CSPRNG, never from rand().
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int
read_random(unsigned char *buf, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

enum mq_status
mq__token(struct mq_conn *c, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[MQ_TOKEN_LEN / 2];
	size_t i;

	if (read_random(raw, sizeof raw) != 0)
		return mq__fail(c, MQ_EIO, "cannot read /dev/urandom: %s",
		    strerror(errno));
	for (i = 0; i < sizeof raw; i++) {
		buf[2 * i] = hex[raw[i] >> 4];
		buf[2 * i + 1] = hex[raw[i] & 15];
	}
	buf[MQ_TOKEN_LEN] = '\0';
	return MQ_OK;
}
