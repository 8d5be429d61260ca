package burstbench.clients.tuned;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.function.BooleanSupplier;

import javax.net.SocketFactory;

import org.apache.activemq.ActiveMQSession;
import org.apache.activemq.MessageDispatchChannel;
import org.apache.activemq.command.Message;
import org.apache.activemq.command.MessageAck;
import org.apache.activemq.transport.TransportFactory;
import org.apache.activemq.transport.tcp.TcpTransport;
import org.apache.activemq.transport.tcp.TcpTransportFactory;
import org.apache.activemq.wireformat.WireFormat;

/**
 * A tcp transport that may leave a command in its buffer, to go out with the next write,
 * when the next write is known to come at once:
 * - the consumer's acknowledgement while its session already holds the next message (that
 *   write comes within one listener call);
 * - the producer's asynchronous send inside a burst sent as fast as possible (the next send
 *   follows; a burst's last message asks for a receipt and so is flushed).
 *
 * activemq-client flushes the socket after every command: a write syscall per message or
 * per acknowledgement here, and a read per command at the broker. The commands, their order
 * and their bytes stay as they were; only when they reach the socket changes. Any other
 * command flushes everything before it returns (keep-alives, close, commits, anything that
 * wants a response, anything over 1 KiB), and so does the one that would make more than
 * {@link #MAX_HELD} held commands or 4 KiB held. What it costs: if this
 * process dies, up to MAX_HELD commands had not reached the broker. For acks the broker then
 * redelivers those messages, as it does the last message of an AUTO_ACKNOWLEDGE session that
 * dies after its listener returned; for sends they are lost with the process, as asynchronous
 * sends still in the socket buffer are.
 *
 * Registered under its own scheme; {@link Tuned#url} rewrites a plain tcp:// URL to it (the
 * tcp:// options all apply). Not activemq-client's API: a subclass of its TcpTransport, and
 * reflection on ActiveMQSession's private dispatch queue.
 */
final class HeldWritesTcp extends TcpTransportFactory {
    static final int MAX_HELD = 32;
    static final int MAX_HELD_COMMAND = 1024;
    static final int MAX_HELD_BYTES = 4096;
    private static final String SCHEME = "bbtcp";
    private static boolean registered;

    /** Whether the session thread has another message queued (read in that thread). */
    private static volatile BooleanSupplier moreWaiting = () -> false;
    /** Set by the producer while it sends as fast as it can. */
    static volatile boolean holdSends;

    static synchronized String scheme() {
        if (!registered) {
            TransportFactory.registerTransportFactory(SCHEME, new HeldWritesTcp());
            registered = true;
        }
        return SCHEME;
    }

    /**
     * Looks at the session's dispatch queue (activemq-client keeps it private: reflection,
     * checked here). Without it every ack is flushed, as by activemq-client.
     */
    static void watch(ActiveMQSession session) {
        try {
            Field ef = ActiveMQSession.class.getDeclaredField("executor");
            ef.setAccessible(true);
            Object executor = ef.get(session);
            Field qf = executor.getClass().getDeclaredField("messageQueue");
            qf.setAccessible(true);
            final MessageDispatchChannel queue = (MessageDispatchChannel) qf.get(executor);
            moreWaiting = () -> !queue.isEmpty();
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("warning: every ack flushed (session queue not readable: " + e + ")");
        }
    }

    @Override
    protected TcpTransport createTcpTransport(WireFormat wf, SocketFactory sf, URI location, URI local)
            throws UnknownHostException, IOException {
        return new Transport(wf, sf, location, local);
    }

    static final class Transport extends TcpTransport {
        // writers are serialised by the MutexTransport above us
        private int held;        // commands in the buffer, not flushed
        private int heldBytes;   // their size
        private Counting out;

        Transport(WireFormat wf, SocketFactory sf, URI location, URI local) throws UnknownHostException, IOException {
            super(wf, sf, location, local);
        }

        @Override
        protected void initializeStreams() throws Exception {
            super.initializeStreams();
            out = new Counting((OutputStream) buffOut);
            dataOut = out;
        }

        @Override
        public void oneway(Object command) throws IOException {
            checkStarted();
            wireFormat.marshal(command, dataOut);
            int bytes = out.take();
            // Held commands stay within half the 8 KiB buffer and each is at most 1 KiB, so
            // the buffer never writes a held command in two parts (a held tail would wait for
            // the next write: 4 KiB sends then stalled ~200 ms at a time).
            boolean hold = held < MAX_HELD && bytes <= MAX_HELD_COMMAND
                    && heldBytes + bytes <= MAX_HELD_BYTES
                    && (command instanceof MessageAck
                        ? moreWaiting.getAsBoolean()
                        : holdSends && command instanceof Message && !((Message) command).isResponseRequired());
            if (hold) {
                held++;
                heldBytes += bytes;
                return;
            }
            held = 0;
            heldBytes = 0;
            dataOut.flush();
        }
    }

    /** DataOutputStream whose byte count can be taken and reset (it saturates at 2 GiB otherwise). */
    private static final class Counting extends DataOutputStream {
        Counting(OutputStream out) {
            super(out);
        }

        int take() {
            int n = written;
            written = 0;
            return n;
        }
    }
}
