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

/* What completes an option's value (operands.c): the row's kind, or
 * COMPLETE_WORDS when its placeholder is fixed words ("first|random");
 * the words, space-separated, into words (COMPLETE_WORDS and
 * COMPLETE_WORD_LIST). */
enum complete value_kind(const struct opt *o, char *words, size_t size);

/* The operands of c, from its usage forms (operands.c): fn is called for
 * each position, n its index ("0", "1") or "*" for all further ones
 * (X...), lead the first operand it follows ("run" in "run NAME") or "*"
 * for any, what completes it (COMPLETE_NONE: taken, nothing offered) and
 * its words. A position fn is not called for takes no operand (a
 * script's first match wins: the index ones come before "*"). */
typedef void slot_fn(FILE *f, const struct command *c, const char *n,
    const char *lead, enum complete k, const char *words);
void each_operand(FILE *f, const struct command *c, slot_fn *fn);

/* What narrows the usage forms of a command (operands.c): fn is called,
 * for each command, with each option that is in some forms only (key
 * "--name", shrt "-x" or NULL) and, for a command of several forms, each
 * fixed word a form's operands begin with (key "=ls", shrt NULL): typed,
 * it leaves the forms (bits) given possible, no other. The scripts offer
 * the options of the forms still possible (mq-completion(1)). */
typedef void forms_fn(FILE *f, const struct command *c, const char *key,
    const char *shrt, unsigned forms);
void each_forms(FILE *f, forms_fn *fn);

/* What the scripts share (bash.c): s as one single-quoted
 * shell word (a newline as a space); the name of what completes a value,
 * then its words; the tables of commands and options for bash and zsh. */
void put_quoted(FILE *f, const char *s);
void put_kind(FILE *f, enum complete k, const char *words);
void put_sh_tables(FILE *f);
/* The scripts' _mq_long (bash and zsh), words: how the shell splits
 * $_mq_r into words. */
void put_sh_long(FILE *f, const char *words);
/* The scripts' _mq_narrow and _mq_offer (bash and zsh), words as for
 * put_sh_long. */
void put_sh_forms(FILE *f, const char *words);

#endif
