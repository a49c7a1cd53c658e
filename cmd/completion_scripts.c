/*
 * completion_scripts.c: the bash, zsh and fish completion scripts, written
 * from the option tables.
 */
#include "cmds.h"

void
put_bash_completion(FILE *f)
{
}

void
put_zsh_completion(FILE *f)
{
}

void
put_fish_completion(FILE *f)
{
}
