package burstbench.bridge.contract;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import burstbench.bridge.shared.Body;
import burstbench.clients.Names;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ContractArgsTest {
  static final ContractArgs.Role P = ContractArgs.Role.PRODUCER;
  static final ContractArgs.Role C = ContractArgs.Role.CONSUMER;

  static ContractArgs parse(ContractArgs.Role role, String... argv) throws ContractArgs.Invalid {
    return ContractArgs.parse(argv, role);
  }

  @Test
  void defaults() throws Exception {
    ContractArgs p = parse(P, "--url", "tcp://127.0.0.1:61616", "--destinations", "a,b");
    assertEquals(List.of("a", "b"), p.destinations);
    assertEquals(1000, p.count);
    assertEquals(6, p.size);
    assertEquals(1, p.bursts);
    assertEquals("p1", p.id);
    assertEquals("0", p.nonce);
    assertFalse(p.persistent);
    ContractArgs c = parse(C, "--url", "failover:(tcp://127.0.0.1:61616)", "--destinations", "a");
    assertEquals("c1", c.id);
    assertEquals("auto", c.ack);
    assertEquals(1000, c.prefetch);
  }

  @Test
  void equalsFormAndFlags() throws Exception {
    ContractArgs p = parse(P, "--url=tcp://h:1", "--destinations=q", "--count=5", "--rate=2.5",
        "--persistent", "--gate", "--tx-batch", "10", "--id", "p.2_x", "--records", "/tmp/r.tsv");
    assertEquals(5, p.count);
    assertEquals(2.5, p.rate);
    assertTrue(p.persistent && p.gate);
    assertEquals(10, p.txBatch);
    assertEquals("p.2_x", p.id);
  }

  // bounds and patterns (--size's maximum, queue names, the nonce's characters) are the harness's:
  // clients/options.yaml, tests/unit/test_options.py
  @Test
  void rejectsBadArguments() {
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--destinations", "q"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--nope"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--ack", "auto"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(C, "--url", "tcp://h:1", "--destinations", "q", "--rate", "1"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(C, "--url", "tcp://h:1", "--destinations", "q", "--ack", "sometimes"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--size", "0"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--count", "0"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--count"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--count", "-5"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--duration", "1"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(C, "--url", "tcp://h:1", "--destinations", "q", "--workers", "0"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "tcp://h:1", "--destinations", "q", "--id", "bad id"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "stomp://h:61613", "--destinations", "q"));
    assertThrows(ContractArgs.Invalid.class, () -> parse(P, "--url", "ws://h:61614/", "--destinations", "q"));
  }

  @Test
  void nonce() throws Exception {
    assertEquals("Run42x", parse(P, "--url", "tcp://h:1", "--destinations", "q", "--nonce", "Run42x").nonce);
    assertEquals("a".repeat(32), parse(P, "--url", "tcp://h:1", "--destinations", "q", "--nonce=" + "a".repeat(32)).nonce);
    assertThrows(ContractArgs.Invalid.class, () -> parse(C, "--url", "tcp://h:1", "--destinations", "q", "--nonce", "x"));
  }

  @Test
  void checksum() {
    // zlib.crc32 as the reference: format(zlib.crc32(b"000000"), "08x") == "394605e6"
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    byte[] b = Body.of(0, 6);
    assertEquals("394605e6", Body.hex8(Body.crc32(crc, b, 0, b.length)));
    b = Body.of(42, 10);
    assertEquals("81bdc985", Body.hex8(Body.crc32(crc, b, 0, b.length)));
    assertEquals("00000000", Body.hex8(Body.crc32(crc, b, 0, 0)));
    assertEquals("0000000f", Body.hex8(15));
    assertEquals(String.format("%08x", -2), Body.hex8(-2));
    assertEquals(0x394605e6L, Body.parseHex8("394605e6"));
    assertEquals(0xfffffffeL, Body.parseHex8("fffffffe"));
    assertEquals(-1L, Body.parseHex8("394605E6"));
    assertEquals(-1L, Body.parseHex8("394605e"));
    assertEquals(-1L, Body.parseHex8(null));
    assertEquals("a?b?", ContractConsumer.field("a\tb\n"));
    assertEquals("ab", ContractConsumer.field("ab"));
  }

  @Test
  void consumerCountZeroMeansUntilStopped() throws Exception {
    assertEquals(0, parse(C, "--url", "tcp://h:1", "--destinations", "q", "--count", "0").count);
  }

  @Test
  void body() {
    assertArrayEquals("234567xxxx".getBytes(StandardCharsets.US_ASCII), Body.of(1_234_567, 10));
    assertArrayEquals("000042".getBytes(StandardCharsets.US_ASCII), Body.of(42, 6));
    assertArrayEquals("000".getBytes(StandardCharsets.US_ASCII), Body.of(42, 3));
    assertTrue(Body.ok("000042xx".getBytes(StandardCharsets.US_ASCII), 8, 42));
    assertTrue(Body.ok("00".getBytes(StandardCharsets.US_ASCII), 2, 42));
    assertFalse(Body.ok("000043".getBytes(StandardCharsets.US_ASCII), 6, 42));
    assertFalse(Body.ok(new byte[0], 0, 0));
    assertFalse(Body.ok("0000".getBytes(StandardCharsets.US_ASCII), 8, 0));   // head shorter than the body's 6
    assertTrue(Body.ok("999999".getBytes(StandardCharsets.US_ASCII), 6, -1));   // seq mod 1,000,000
  }

  @Test
  void packedHead() {
    byte[] b = "000042xx".getBytes(StandardCharsets.US_ASCII);
    assertEquals(0x323430303030L, Body.head(b, 8));   // '0','0','0','0','4','2' from the low byte up
    assertEquals(0x3030L, Body.head(b, 2));
    assertTrue(Body.ok(Body.head(b, 8), 8, 42));
    assertTrue(Body.ok(Body.head(b, 8), 8, 1_000_042));
    assertFalse(Body.ok(Body.head(b, 8), 8, 43));
    assertFalse(Body.ok(Body.head("000042".getBytes(StandardCharsets.US_ASCII), 6), 6, 420));
    assertTrue(Body.ok(Body.head(b, 3), 3, 42));   // a 3-byte body: its 3 digits
    assertFalse(Body.ok(Body.head("001".getBytes(StandardCharsets.US_ASCII), 3), 3, 42));
    assertFalse(Body.ok(0L, 0, 0));
  }

  @Test
  void namesIndexInFirstSeenOrderWhateverTheLastWas() {
    Names n = new Names();
    assertEquals(0, n.of("p1"));
    assertEquals(0, n.of(new String("p1")));   // equal, not the same instance
    assertEquals(1, n.of("p2"));
    assertEquals(0, n.of("p1"));
    assertEquals(1, n.of("p2"));
    assertEquals(2, n.of("p3"));
    assertEquals(java.util.List.of("p1", "p2", "p3"), n.names);
  }

  @Test
  void eachSenderSizesItsRecordsForItsShareOfTheMessages() throws Exception {
    ContractArgs p = parse(P, "--url", "tcp://h:1", "--destinations", "a,b,c", "--count", "1000",
        "--bursts", "2");
    assertEquals(667, ProducerSender.recordCapacity(p, 3));   // 2000 over 3 senders, rounded up
    assertEquals(2000, ProducerSender.recordCapacity(p, 1));
    ContractArgs big = parse(P, "--url", "tcp://h:1", "--destinations", "a", "--count",
        "5000000");
    assertEquals(1 << 20, ProducerSender.recordCapacity(big, 1));   // grown past it when needed
  }
}
