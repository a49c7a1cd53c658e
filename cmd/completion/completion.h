/*
 * completion.h: what mq completion's files share (cmd/completion/): one
 * script writer per shell, from the option tables.
 */
#ifndef MQ_COMPLETION_H
#define MQ_COMPLETION_H

#include "commands.h"
#include "output/output.h"

/* The shell completion scripts (bash.c, zsh.c, fish.c). */
void put_bash_completion(FILE *f);
void put_zsh_completion(FILE *f);
void put_fish_completion(FILE *f);

/* What the scripts share (bash.c): s as one single-quoted
 * shell word (a newline as a space); the name of what completes a value,
 * then its words; the tables of commands and options for bash and zsh. */
void put_quoted(FILE *f, const char *s);
void put_kind(FILE *f, enum complete k, const char *words);
void put_sh_tables(FILE *f);
/* The scripts' _mq_long (bash and zsh), words: how the shell splits
 * $_mq_r into words. */
void put_sh_long(FILE *f, const char *words);

#endif
