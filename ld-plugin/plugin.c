/* placeholder */
int onload (void *tv); int onload (void *tv) { (void) tv; return 0; }
