/* Checked output for the tools.  A write that fails (a full disk,
 * /dev/full, a file system gone read-only) ends the tool with
 * "TOOL: write error: FILE: REASON" on stderr and a non-zero status, as
 * coreutils do, never in silence with status 0. */
#ifndef PF_OUTPUT_H
#define PF_OUTPUT_H
#include <stdio.h>

/* Once, first thing in main: standard output is checked when the tool
 * exits (exit or return from main), and a failure exits with `status`. */
void pf_output_init(const char *tool, int status);

/* Flush and close f (standard error is flushed, not closed), named
 * `name` in the message.  0, or -1 after saying so on stderr. */
int pf_output_close(FILE *f, const char *name);
#endif
