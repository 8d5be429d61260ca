import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;

import jakarta.jms.JMSException;
import jakarta.jms.Message;

import org.apache.activemq.command.ActiveMQBytesMessage;
import org.apache.activemq.command.ActiveMQMessage;
import org.apache.activemq.command.ActiveMQQueue;
import org.apache.activemq.command.MessageId;
import org.apache.activemq.openwire.OpenWireFormat;

import burstbench.clients.loops.Recv;

/**
 * The stock JMS consumer's own work a message, apart from the broker and the socket:
 * ListenerCost SIZE [MESSAGES [ROUNDS]]. Messages are made as a producer makes them (the six
 * bench properties, a body of SIZE bytes: the counter digits, then 'x'), marshalled and
 * unmarshalled with OpenWire as the consumer's transport does, and marked read-only as the
 * session marks what it dispatches. Each round then hands one fresh set to the loop's listener
 * (perf's {@link Recv#read}: the six properties and the body) and one to the Consumer's own listener
 * (burstbench.clients.Consumer.onMessage, the code the bench runs, called through a method
 * handle), alternating. Prints ns a message for each, the median and min-max over the rounds
 * after the first quarter (warm-up), and the difference: what the harness adds to a receive.
 * Each timed loop starts after a full collection, with a young generation (-Xmn) that its
 * messages' allocations do not fill: no collection falls in it.
 * Run: java -Xmx1g -Xmn768m -XX:+UseParallelGC -cp "clients/java/target/classes:clients/java/target/lib/*" perf/micro/ListenerCost.java 6
 */
public final class ListenerCost {
    /** As perf's Recv does a message: its read (the six properties, the body) and the clock. */
    static void loop(Message[] ms) throws JMSException {
        long t = 0;
        for (Message m : ms) {
            t ^= System.nanoTime();
            Recv.read(m);
        }
        if (t == 42) System.err.println();
    }

    /** The Consumer's own listener: exact types, so that the compiler inlines the call. */
    static MethodHandle onMessage;

    static void consumer(Object consumer, Message[] ms) throws Throwable {
        final MethodHandle h = onMessage;
        for (Message m : ms) h.invokeExact(consumer, m, 0);
    }

    static Message[] messages(OpenWireFormat wf, int size, int n, long first) throws Exception {
        Message[] ms = new Message[n];
        byte[] body = new byte[size];
        for (int i = 0; i < n; i++) {
            long seq = first + i;
            Arrays.fill(body, (byte) 'x');
            byte[] digits = String.format("%06d", seq % 1_000_000).getBytes();
            System.arraycopy(digits, 0, body, 0, Math.min(6, size));
            ActiveMQBytesMessage m = new ActiveMQBytesMessage();
            m.setStringProperty("bb_producer", "p1");
            m.setStringProperty("bb_seq", Long.toString(seq));
            m.setStringProperty("bb_burst", "0");
            m.setStringProperty("bb_sent_ns", Long.toString(System.currentTimeMillis() * 1_000_000L));
            m.setStringProperty("bb_nonce", "n0123456789abcdef");
            m.setStringProperty("bb_crc32", "0badf00d");
            m.writeBytes(body);
            m.setDestination(new ActiveMQQueue("bb-q0"));
            m.setMessageId(new MessageId("ID:bench-1-1-1:1:1:1", seq));
            m.onSend();
            ActiveMQMessage r = (ActiveMQMessage) wf.unmarshal(wf.marshal(m));
            r.setReadOnlyBody(true);
            r.setReadOnlyProperties(true);
            ms[i] = r;
        }
        return ms;
    }

    public static void main(String[] a) throws Throwable {
        // the clients' Common keeps stdout for the contract's lines (System.out goes to stderr
        // once it is loaded): the result line goes to the stdout the JVM started with
        java.io.PrintStream out = System.out;
        int size = Integer.parseInt(a[0]);
        int n = a.length > 1 ? Integer.parseInt(a[1]) : 5_000;
        int rounds = a.length > 2 ? Integer.parseInt(a[2]) : 40;
        OpenWireFormat wf = new OpenWireFormat(12);
        wf.setTightEncodingEnabled(false);

        Class<?> cc = Class.forName("burstbench.clients.Consumer");
        Class<?> opts = Class.forName("burstbench.clients.Opts");
        Class<?> program = Class.forName("burstbench.clients.Opts$Program");
        MethodHandles.Lookup cl = MethodHandles.privateLookupIn(cc, MethodHandles.lookup());
        Object stock = MethodHandles.privateLookupIn(program, MethodHandles.lookup())
                .findStatic(program, "stock", MethodType.methodType(program, String.class)).invoke("consumer");
        java.io.File rec = java.io.File.createTempFile("bb-listener-cost", ".tsv");
        rec.deleteOnExit();
        String[] args = {"--url", "tcp://127.0.0.1:1", "--id", "c1", "--destinations", "bb-q0",
                         "--count", Long.toString((long) n * rounds), "--records", rec.getPath()};
        Object o = opts.getMethod("parse", String.class, String[].class, program).invoke(null, "consumer", args, stock);
        Object consumer = cl.findConstructor(cc, MethodType.methodType(void.class, o.getClass())).invoke(o);
        onMessage = cl.findVirtual(cc, "onMessage", MethodType.methodType(void.class, Message.class, int.class))
                .asType(MethodType.methodType(void.class, Object.class, Message.class, int.class));

        double[][] ns = new double[2][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int side = 0; side < 2; side++) {
                Message[] ms = messages(wf, size, n, (long) r * n);
                System.gc();   // the timed loop starts with an empty young generation, and ends before it fills
                long t0 = System.nanoTime();
                if (side == 0) loop(ms);
                else consumer(consumer, ms);
                ns[side][r] = (System.nanoTime() - t0) / (double) n;
            }
        }
        int skip = rounds / 4;
        double[] diff = new double[rounds - skip];
        for (int r = skip; r < rounds; r++) diff[r - skip] = ns[1][r] - ns[0][r];
        // what the Consumer counted as bench messages: every one it was handed, or it did not record them
        long received = (long) cl.findVirtual(cc, "received", MethodType.methodType(long.class)).invoke(consumer);
        out.printf("{\"size\":%d,\"messages\":%d,\"rounds\":%d,\"received\":%d,\"loop_ns\":%s,\"consumer_ns\":%s,\"harness_ns\":%s}%n",
                          size, n, rounds - skip, received, stats(Arrays.copyOfRange(ns[0], skip, rounds)),
                          stats(Arrays.copyOfRange(ns[1], skip, rounds)), stats(diff));
    }

    /** [median, min, max] */
    static String stats(double[] x) {
        double[] s = x.clone();
        Arrays.sort(s);
        double med = s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        return String.format("[%.1f,%.1f,%.1f]", med, s[0], s[s.length - 1]);
    }
}
