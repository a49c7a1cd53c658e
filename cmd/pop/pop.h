/*
 * pop.h: what mq pop's files share (cmd/pop/).
 */
#ifndef MQ_POP_H
#define MQ_POP_H

#include "commands.h"
#include "output/output.h"

/* mq pop's forms (output.c): the shell form (MQ_*_idx variables when
 * many), JSON, and the raw payload to path or stdout with the receipt
 * apart (on failure, why says what failed; returns the exit status). */
void pop_print_shell(const struct mq_job *j, size_t idx, int many);
void pop_print_json(const struct mq_job *j);
int pop_print_raw(const struct mq_job *j, const char *path,
    const char *receipt_path, char *why, size_t size);

#endif
