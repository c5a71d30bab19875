/* device.c: the class of the device an object's file is on (step 6 of
 * runtime/prefetch.c), which chooses the gap of a region filled without
 * a pinned one.
 *
 * The steps are include/pbitmap-plan.h's, shared with elfpatch --run;
 * here they make raw system calls.
 */

#include "rt.h"
#include "sys.h"

/* The class of the device the file PATH is on (step 6), unknown without
   a name (PATH null, a secure process) or when a call fails.  */
enum pbitmap_device
rt_file_device (struct proc *pr, const char *path)
{
  struct rt_stat st;
  if (path == NULL || *path == '\0' || rt_proc_secure (pr)
      || rt_newfstatat (RT_AT_FDCWD, path, &st, 0) != 0)
    return PBITMAP_DEVICE_UNKNOWN;
  if (pr->dev == 0 || pr->dev != st.st_dev)
    {
      struct pbitmap_sysfs sys = { rt_sysfs_readlink, rt_sysfs_first_byte,
                                  NULL };
      pr->dev_class = pbitmap_device_classify (rt_major (st.st_dev),
                                               rt_minor (st.st_dev), &sys);
      pr->dev = st.st_dev;
    }
  return pr->dev_class;
}

/* Sets GAP to the gap of the class of the device PATH is on (PATH as for
   rt_file_device) and returns its pages.  */
uint32_t
rt_gap_look_up (struct proc *pr, const char *path, struct gap *gap)
{
  enum pbitmap_device d = rt_file_device (pr, path);
  gap->pages = pbitmap_device_gap (d);
  gap->device = (int) d;
  return gap->pages;
}
