/*
 * pop/output.c: the forms mq pop hands jobs over in: the raw payload with
 * its receipt apart, an eval-able shell form, JSON (mq-pop(1) OUTPUT).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pop.h"

static void
put_shell_var(const char *name, size_t idx, int many)
{
	if (many)
		printf("%s_%zu=", name, idx);
	else
		printf("%s=", name);
}

void
pop_print_shell(const struct mq_job *j, size_t idx, int many)
{
	char receipt[MQ_RECEIPT_SIZE];

	mq_format_receipt(&j->receipt, receipt);
	put_shell_var("MQ_ID", idx, many);
	printf("%llu\n", (unsigned long long)j->id);
	put_shell_var("MQ_RECEIPT", idx, many);
	printf("%s\n", receipt);
	/* the queue's name as the row has it, which may differ from the
	 * one asked for (trailing spaces compare equal): quoted if need be */
	put_shell_var("MQ_QUEUE", idx, many);
	put_shell_word((const unsigned char *)j->queue, strlen(j->queue));
	putchar('\n');
	put_shell_var("MQ_PRIORITY", idx, many);
	printf("%d\n", j->priority);
	put_shell_var("MQ_ATTEMPT", idx, many);
	printf("%u\n", j->attempt);
	/* a shell variable cannot hold NUL: such payloads come encoded */
	if (memchr(j->payload, '\0', j->len)) {
		put_shell_var("MQ_PAYLOAD_BASE64", idx, many);
		put_base64(j->payload, j->len);
	} else {
		put_shell_var("MQ_PAYLOAD", idx, many);
		put_shell_quoted(j->payload, j->len);
	}
	putchar('\n');
}

void
pop_print_json(const struct mq_job *j)
{
	char receipt[MQ_RECEIPT_SIZE];

	mq_format_receipt(&j->receipt, receipt);
	printf("{\"id\":%llu,\"receipt\":\"%s\",\"queue\":",
	    (unsigned long long)j->id, receipt);
	put_json_string((const unsigned char *)j->queue, strlen(j->queue));
	printf(",\"priority\":%d,\"attempt\":%u,", j->priority, j->attempt);
	put_json_payload(j->payload, j->len);
	puts("}");
}

/* Writes the raw payload to path (or stdout) and the receipt apart. On
 * failure, says what failed (the caller adds what became of the job). */
int
pop_print_raw(const struct mq_job *j, const char *path,
    const char *receipt_path, char *why, size_t size)
{
	char receipt[MQ_RECEIPT_SIZE];
	FILE *out = stdout, *rf = NULL;

	mq_format_receipt(&j->receipt, receipt);
	if (path && (out = fopen(path, "wb")) == NULL) {
		snprintf(why, size, "cannot write '%s': %s", shown(path),
		    strerror(errno));
		return EX_CANTCREAT;
	}
	/* the receipt's file made before the payload goes out: one that
	 * cannot be made leaves nothing written (no payload on standard
	 * output of a job given back) */
	if (receipt_path && (rf = fopen(receipt_path, "w")) == NULL) {
		snprintf(why, size, "cannot write receipt to '%s': %s",
		    shown(receipt_path), strerror(errno));
		if (path)
			fclose(out);
		return EX_CANTCREAT;
	}
	/* the payload is out before its receipt is shown; a short write
	 * is not flushed (the rest would go out later, at exit) */
	int bad = fwrite(j->payload, 1, j->len, out) != j->len;
	int err = bad ? errno : 0;

	if (path ? fclose(out) != 0 || bad : bad || flush_stdout() != 0) {
		if (err == 0)
			err = errno;
		if (!path) {
			stdout_error(err);
			snprintf(why, size, "write failure on standard "
			    "output%s", stdout_cause());
		} else
			snprintf(why, size, "write failure on %s: %s",
			    shown(path), strerror(err ? err : EIO));
		if (rf)
			fclose(rf);
		return EX_IOERR;
	}
	if (rf) {
		bad = fprintf(rf, "%s\n", receipt) < 0;
		err = bad ? errno : 0;
		if (fclose(rf) != 0 || bad) {
			if (err == 0)
				err = errno;
			snprintf(why, size, "write failure on '%s' (the "
			    "receipt): %s", shown(receipt_path),
			    strerror(err ? err : EIO));
			return EX_IOERR;
		}
	} else if ((bad = fprintf(path ? stdout : stderr, "%s\n",
	    receipt) < 0) || (path ? flush_stdout() != 0 :
	    fflush(stderr) == EOF)) {
		/* the payload without its receipt is not handed over */
		err = errno;
		if (path) {
			stdout_error(err);
			snprintf(why, size, "write failure on standard "
			    "output%s", stdout_cause());
		} else
			snprintf(why, size, "write failure on standard error "
			    "(the receipt): %s", strerror(err ? err : EIO));
		return EX_IOERR;
	}
	return 0;
}
