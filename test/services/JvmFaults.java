// JvmFaults.java - a JVM taking the faults it takes on purpose: THREADS
// threads ("jvm-worker-N") pass a token round a ring (LockSupport park and
// unpark: condvar waits and signals) and, between hand-offs, call a method
// on null in a hot loop (once compiled, the JIT's implicit null check: a
// SIGSEGV the JVM's handler turns into the NullPointerException caught
// here); System.gc() between rounds (safepoints). Prints "npe N hops H".
// With "crash", then writes through address 16 (Unsafe): the JVM's error
// handler runs and aborts.
//   java JvmFaults.java THREADS HOPS [crash]
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class JvmFaults {
    static final AtomicLong npes = new AtomicLong();
    static volatile int turn;

    static int len(String s) { return s.length(); }

    static long nullCalls(int n) {
        long caught = 0;
        String s = null;
        for (int i = 0; i < n; i++) {
            try { len(s); } catch (NullPointerException e) { caught++; }
        }
        return caught;
    }

    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[0]), hops = Integer.parseInt(a[1]);
        Thread[] t = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int me = i;
            t[i] = new Thread(() -> {
                for (int h = 0; h < hops; h++) {
                    while (turn != me) LockSupport.park();
                    npes.addAndGet(nullCalls(2000));
                    turn = (me + 1) % threads;
                    LockSupport.unpark(t[(me + 1) % threads]);
                }
            }, "jvm-worker-" + i);
        }
        for (Thread x : t) x.start();
        for (int r = 0; r < 3; r++) { Thread.sleep(20); System.gc(); }
        for (Thread x : t) x.join();
        System.out.println("npe " + npes.get() + " hops " + (long) threads * hops);
        if (a.length > 2 && a[2].equals("crash")) {
            java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            ((sun.misc.Unsafe) f.get(null)).putInt(16L, 1);
        }
    }
}
