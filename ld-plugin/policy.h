/* policy.h: the link policy, one for the plugin and for pbitmap-ld.
 *
 * The plugin (plugin.c) works inside ld.bfd and gold, pbitmap-ld
 * (pbitmap-ld.c) around mold, lld and any other linker.  What a link
 * with a region is does not depend on which of them makes it, so it is
 * decided here, once: the options and the values they take, how large
 * the region is made, which runtime object the link gets and which
 * header field of the region points into it, whether a static
 * executable's entry point moves, and what is said about the finished
 * output.  The two front ends differ only in how they reach the linker
 * and in how a user spells an option: -plugin-opt=NAME for the plugin,
 * --pbitmap-NAME for pbitmap-ld.  Messages that name an option spell it
 * the front end's way (struct link_policy's spelling and prefix).
 *
 * Both report through plugin_message (plugin.h); each front end defines
 * it and honours quiet there.
 */
#ifndef PBITMAP_LD_POLICY_H
#define PBITMAP_LD_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "plugin.h"

/* A bitmap of this many pages describes a 64 TiB image; beyond it a
 * capacity is a typo, not a program. */
#define POLICY_CAPACITY_MAX (UINT64_C (1) << 34)

/* An IR object (LTO) carries no machine code yet; what it will become is
 * estimated as this many times its size.  Measured: about 0.7-0.9 times
 * with GCC 12 at -O0 and -O1 (compressed IR); overestimating costs 32
 * bytes of region per MiB. */
#define LTO_GROWTH 4

/* GNU ld's and gold's executables and libraries have up to four PT_LOADs
 * (headers and read-only data, code, more read-only data, data), each
 * starting at a file offset aligned to the max-page-size after the first:
 * at 2 MiB, a small program's file is 6 MiB.  The largest page size
 * taken; a larger one is a typo for the linker to report. */
#define POLICY_PADDED_SEGMENTS 3
#define POLICY_MAX_PAGE_SIZE (UINT64_C (1) << 30)

/* The options, as given, and what the front end learnt of the link. */
struct link_policy
{
  const char *spelling;         /* as set: "-plugin-opt=", "--pbitmap-" */
  const char *prefix;           /* as received: "", "--pbitmap-" */
  const char *runtime_dir;      /* runtime-dir=DIR */
  const char *order;            /* order=FILE, or NULL */
  uint64_t capacity;            /* capacity=PAGES; 0: estimate */
  bool no_runtime;              /* no-runtime, or a foreign target */
  bool foreign_target;          /* the runtime is another machine's */
  bool hook_preinit;            /* hook=preinit (hook=entry: false) */
  bool verbose;                 /* verbose */
  bool quiet;                   /* quiet: no warnings */
  enum ld_plugin_output_file_type output;  /* LDPO_EXEC, _PIE, _DYN, _REL */
  bool gold;                    /* the linker is gold */
  uint64_t max_page_size;       /* the linker's -z max-page-size, or 0 */
};

/* The defaults.  A user sets an option NAME as SPELLING NAME; it reaches
 * the front end as PREFIX NAME (the linker strips -plugin-opt=). */
void policy_init (struct link_policy *p, const char *spelling,
                  const char *prefix);

/* Takes the option OPT (its name without the front end's prefix),
 * spelled GIVEN on the command line.  Returns 1 when OPT is one of the
 * policy's, 0 when it is not (hook=main is not), and -1 after a fatal
 * message for a value it cannot take. */
int policy_option (struct link_policy *p, const char *opt, const char *given);

/* The fatal message for an unknown option GIVEN, listing the known ones
 * as they reach the front end: OWN first, when the front end has options
 * of its own. */
void policy_unknown_option (const struct link_policy *p, const char *given,
                            const char *own);

/* The capacity estimate, from what the link's inputs will add to the
 * image: allocated section sizes (NOBITS included) and COMMON symbols of
 * relocatable objects, and LTO_GROWTH times the size of LTO IR (an ELF
 * object with .gnu.lto_ sections, or anything that is not ELF).
 * Archives as a whole and shared libraries are not part of the image;
 * archive members are, as far as the front end sees them. */
struct link_estimate
{
  uint64_t bytes;               /* estimated bytes of image */
  unsigned inputs;              /* files and members counted */
  bool target_seen;
  struct reserve_target target; /* of the first relocatable object */
};

/* Called for each relocatable object an estimate counts. */
typedef void estimate_object_fn (Elf *elf, void *arg);

/* Counts the SIZE bytes at OFFSET of FD, one input file or archive
 * member (not necessarily page-aligned), and calls FN (when not NULL)
 * with ARG for a relocatable object.  An input that cannot be mapped
 * counts with its size. */
void estimate_input (struct link_estimate *e, int fd, off_t offset,
                     off_t size, estimate_object_fn *fn, void *arg);

/* Counts SIZE bytes of IR that the front end did not see itself. */
void estimate_add_ir (struct link_estimate *e, uint64_t size);

/* The target of the link: its first relocatable object's, or, without
 * one, the machine's we run on. */
const struct reserve_target *estimate_target (struct link_estimate *e);

/* Takes ARG, one argument of the real linker's command line, and NEXT,
 * the one after it (or NULL), for what the policy learns there: the
 * -z max-page-size=SIZE (or -zmax-page-size=SIZE) that GNU ld and gold
 * align segments' file offsets to.  Returns 1 when NEXT was ARG's value,
 * else 0. */
int policy_linker_argument (struct link_policy *p, const char *arg,
                            const char *next);

/* The segment padding the estimate adds for P's max-page-size: none for
 * the default, else POLICY_PADDED_SEGMENTS times the size. */
uint64_t policy_padding (const struct link_policy *p);

/* The capacity for an image estimated at BYTES: a quarter more for
 * alignment and linker-made sections, plus 16 pages, rounded up to a
 * multiple of 128 pages. */
uint64_t policy_capacity_for (uint64_t bytes);

/* capacity= when given, else the capacity for E's estimate and P's
 * padding. */
uint64_t policy_capacity (const struct link_policy *p,
                          const struct link_estimate *e);

/* Which header field of the region the link fills in: the entry field of
 * an executable and the mark field of a shared library, when their
 * runtime is linked. */
enum reserve_link policy_region_link (const struct link_policy *p);

/* Whether the cleanup makes a static executable's entry point the
 * runtime's stub: an executable with the runtime and hook=entry. */
bool policy_redirect_entry (const struct link_policy *p);

/* "executable", "PIE", "shared library" or "relocatable". */
const char *policy_output_kind (const struct link_policy *p);

/* Writes the region object of CAPACITY pages for TARGET to a temporary
 * file, *PATH (to be freed and removed); gold's gets the spare note.
 * Returns 0, or -1 after a fatal message. */
int policy_write_region (const struct link_policy *p,
                         const struct reserve_target *target,
                         uint64_t capacity, char **path);

/* The runtime object a link for TARGET gets, in *PATH (to be freed), or
 * NULL with no-runtime.  A runtime built for another ELF class, byte
 * order or machine (an i386 or x32 link against the x86-64 runtime) is
 * not linked: a warning says so, and the policy becomes no-runtime and
 * foreign_target, so that the region and the entry point are those of a
 * link without it.  Called once per link, before the region is written.
 * Returns 0, or -1 after a fatal message (one that names the options to
 * set when the object is not there). */
int policy_runtime (struct link_policy *p,
                    const struct reserve_target *target, char **path);

/* What is said about the patched output OUTPUT whose region describes
 * CAPACITY pages: a warning when the image is larger (and the option to
 * relink with), a warning when a static executable's entry slot was not
 * found, and with verbose that the entry point is the runtime's stub. */
void policy_report_output (const struct link_policy *p, const char *output,
                           uint64_t capacity,
                           const struct patch_outcome *outcome);

#endif /* PBITMAP_LD_POLICY_H */
