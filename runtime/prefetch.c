/* prefetch.c: the pbitmap runtime's protocol, and its core.  At program
 * start the runtime reads the program's own pbitmap region and asks the
 * kernel to read the pages the bitmap marks, before anything else faults
 * them in one by one.  Its files, one or a few steps each, are listed in
 * runtime/rt.h; this one does steps 3 to 7 for one object.
 *
 * The protocol, step by step:
 *
 *  1. Environment.  PBITMAP chooses the mode: off (or 0, or empty), the
 *     default willneed, populate or full; any of the last three may end
 *     in "-nocheck", which skips step 5's residency sample; an unknown
 *     value is the default.  PBITMAP_DEBUG (any value but "", "0" and
 *     "off") makes the runtime print one line per object to standard
 *     error.  AT_SECURE, AT_EXECFN and AT_PHDR come from the auxiliary
 *     vector on the initial stack, found after the environment array that
 *     follows ARGV there (glibc passes the initial ARGV to every hook,
 *     dlopen included): a setuid, setgid or file-capability program
 *     ignores all PBITMAP variables, and so does a program whose
 *     auxiliary vector is not found.
 *
 *  2. Program headers.  Nothing is searched for.  The executable's
 *     program headers are where AT_PHDR says, its ELF header at the start
 *     of their page.  A library's ELF header is at its load address,
 *     which the dynamic linker's list gives (step 8): the entry with the
 *     highest load address at or below __pbitmap_region, the region the
 *     plugin's region object defines.  (The linker's __ehdr_start would
 *     say it too, but eu-elflint reports that symbol, which lies in no
 *     section.)  The header's program headers must lie in its first page,
 *     no unreadable PT_LOAD may share a page with another, and its region
 *     (below) must map exactly to __pbitmap_region.  The load bias is the
 *     address of the ELF header minus the p_vaddr of the PT_LOAD with
 *     p_offset 0, and must agree with PT_PHDR when there is one.
 *     A tool that moved the note (patchelf) leaves the program header
 *     pointing at __pbitmap_region, where other bytes are now, and step 3
 *     finds them no valid region; once elfpatch --resync has pointed it
 *     at the note's new place, the header is also accepted when
 *     __pbitmap_region lies in the file range of one of its PT_LOADs.
 *     Memory is read where these headers say the file is mapped
 *     readable.  The executable's runtime runs before any constructor and
 *     reads the pages as the kernel and the dynamic linker mapped them.
 *     A library's runtime runs after the constructors of the libraries it
 *     depends on, which may have unmapped or protected its pages, so it
 *     reads a range of its own image only once MADV_POPULATE_READ has
 *     faulted it in, which fails where a read would fault.
 *
 *  3. Region.  Exactly one PT_PRESENT_BITMAP, or, when there is none (a
 *     linker that merges all notes into one PT_NOTE), exactly one pbitmap
 *     note among the notes of the PT_NOTEs; inside the file range of one
 *     readable PT_LOAD at the matching address, holding a note and header
 *     exactly as include/pbitmap-format.h says.  Anything else: no valid
 *     bitmap, nothing is done.  A region without PBITMAP_F_FILLED or with
 *     pages_set 0 is an empty bitmap: nothing to do either.
 *
 *  4. Plan.  The PT_LOADs are visited in ascending address order; for
 *     each, the bits of the file pages it maps are scanned a 64-bit word at
 *     a time, skipping zero words, taking runs of set bits whole.  A set
 *     page already mapped by an earlier PT_LOAD is skipped, so every file
 *     page is planned once.  The runs go to the chunker of
 *     include/pbitmap-plan.h, which elfpatch --run shares: reads of at
 *     most 512 KiB that start and end at set pages, reading through gaps
 *     of up to max_gap pages (reading a small gap costs less than another
 *     I/O), here only where the memory between is mapped from the file.
 *     Mode full ignores the bits (it still needs a valid region) and plans
 *     every page of every PT_LOAD's file range.
 *
 *  5. Residency sample.  Unless "-nocheck", the plan is first only
 *     counted, keeping up to 16 of its pages evenly spread over it.  If
 *     the process has taken a major fault already (getrusage), the start
 *     is cold and the plan is issued.  Otherwise the object's file is
 *     opened read-only and non-blocking by the name the process knows it
 *     by (AT_EXECFN, or the dynamic linker's name for a library; never in
 *     a secure process), its ELF and program headers are compared with
 *     the mapped ones, and a one-byte preadv2 with RWF_NOWAIT of each
 *     sampled page asks whether it is in the page cache; if all are,
 *     nothing is issued ("cached").  No name, another file or any page
 *     not cached: the plan is issued.
 *
 *  6. Gap.  A region filled with --device or --max-gap pins its max_gap.
 *     One that leaves it to the reader (PBITMAP_F_GAP_AUTO) is read with
 *     the gap of the class of the device the object's file is on:
 *     newfstatat of its name (none in a secure process: the unknown
 *     device's gap), then, unless the device is anonymous (tmpfs,
 *     overlayfs), readlinkat of its sysfs entry (not for a loop device)
 *     and maybe a read of its queue/rotational (include/pbitmap-plan.h).
 *     It is looked up only while the plan is issued, at the first gap
 *     between set pages whose reading depends on the class (longer than
 *     the least class gap, at most the greatest); the reads before it are
 *     then already in flight, and a plan that is the same for every class
 *     looks nothing up.  The last device's class is kept, so the objects
 *     of one device cost one lookup.  A warm start makes none of these
 *     calls.  PBITMAP_DEBUG looks the class up for its line when the
 *     plan did not, after the time the line reports.
 *
 *  7. Issue.  Each chunk, one read, is MADV_POPULATE_READ in one call in
 *     mode populate, or else (or when the kernel does not know it)
 *     MADV_WILLNEED, in one call from each 32-page boundary of the chunk
 *     to its end, since the kernel cuts one call to the device's
 *     read-ahead window, which may be as small as 128 KiB
 *     (include/pbitmap-plan.h).  The debug line counts the pages planned
 *     (gaps included), the runs of set pages among them (the chunker
 *     counts them, as --show and elfpatch --run -v do) and the reads,
 *     and, when the runtime chose the gap, the gap and the device class
 *     ("gap=10 (cloud)").
 *
 *  8. Libraries.  In glibc the dynamic linker runs the executable's
 *     .preinit_array before the initializers of the libraries it loaded
 *     with it, so the executable's hook then walks the dynamic linker's
 *     list of loaded objects (struct r_debug, found through the
 *     executable's DT_DEBUG) and does steps 3 to 7 for every one whose
 *     headers and region check out, each line ending in "via PROGRAM".
 *     It then records, in its own data, the last object of the list it
 *     walked.  A library linked with pbitmap has its own copy of this
 *     runtime, in its .init_array; that copy finds the executable's
 *     program headers through AT_PHDR, the record through the
 *     executable's region (its entry field leads to the entry slot, whose
 *     third word leads to the record, doc/format.md), and its own place
 *     in the list as in step 2: at or before the recorded object, the
 *     executable's runtime did its work and it does nothing.  A library
 *     loaded later by dlopen, or into a program without the runtime, is
 *     not in the walked part of the list and prefetches itself.  Nothing
 *     is written into another object.  (A residency sample cannot tell
 *     the copy: right after WILLNEED the pages are in the page cache but
 *     not yet read.)  pbitmap's audit module (audit/audit.c), when it is
 *     loaded, does all of this before any runtime runs and says so in
 *     the objects' own words: the executable's walk record set before
 *     its hook runs, a library's mark "pbm-done"; a runtime that finds
 *     either does nothing, and prints nothing.
 *
 *  9. Start-up.  When a static executable's entry stub has issued reads,
 *     its segments are MADV_RANDOM until the runtime's .preinit_array
 *     entry sets them back to MADV_NORMAL, so that the C library's
 *     start-up faults read only their own page (__pbitmap_entry_run).
 *
 * The work is bounded by the regions' sizes, the number of PT_LOADs and
 * of loaded objects.  Only raw system calls are made, and only ones that
 * systemd's @system-service filter and Docker's default seccomp profile
 * allow; one that fails makes the runtime do less, never stop the
 * program.  Nothing is allocated, no memory is written but this
 * runtime's own, nothing but the debug lines is written to a file, and
 * errno is never touched.  Pages outside every PT_LOAD (section headers,
 * debug information) are never read.  Every file of the runtime keeps
 * these rules.
 */


#include "rt.h"
#include "sys.h"

/* Finds IM's region and prefetches what it marks, as OPTS say.  PATH
   names IM's file for the residency sample, or is null.  */
static enum status
prefetch (const struct rt_object *im, unsigned opts, struct proc *pr,
          const char *path, struct counts *n, struct gap *gap)
{
  const struct pbitmap_header *h = rt_region_header (im);
  if (h == NULL)
    return ST_INVALID;
  return rt_plan_prefetch (im, h, opts, pr, path, RT_SAMPLES, n, gap);
}

/* Runs the core on the object IM (null: this object), as PR's options
   say; PATH names the object's file for the residency sample, or is
   null.  */
void
rt_run (struct proc *pr, const struct rt_object *im, const char *path,
        struct outcome *o)
{
  unsigned opts = pr->opts;
  uint64_t t0 = 0;
  o->n.pages = o->n.runs = o->n.reads = 0;
  o->gap.pages = 0;
  o->gap.device = GAP_PINNED;
  o->us = 0;
  o->have_image = 0;
  o->st = ST_OFF;
  if (opts & OPT_DEBUG)
    t0 = rt_now_ns ();
  if ((opts & OPT_MODE) != MODE_OFF)
    {
      if (im != NULL)
        {
          o->im = *im;
          o->have_image = 1;
        }
      else
        o->have_image = rt_self_find (pr, &o->im) == 0;
      o->st = o->have_image ? prefetch (&o->im, opts, pr, path, &o->n,
                                        &o->gap)
                            : ST_INVALID;
    }
  if (opts & OPT_DEBUG)
    rt_report_finish (pr, path, t0, o);
}
