package burstbench.clients;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * The contract's TLS files (--ca, --cert, --key: PEM) as the JDK's key and trust managers, for
 * ActiveMQSslConnectionFactory.setKeyAndTrustManagers: the JMS client's and the bridge's. A
 * file that will not do is an IllegalArgumentException naming the option.
 */
public final class Tls {
    private Tls() {}

    private static final Pattern KEY =
        Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    /** The client's own certificate (chain) and its unencrypted PKCS#8 PEM key, for mutual TLS. */
    public static KeyManager[] keyManagers(String certPem, String keyPem) {
        try {
            List<Certificate> chain = new ArrayList<>();
            try (InputStream in = Files.newInputStream(Path.of(certPem))) {
                chain.addAll(CertificateFactory.getInstance("X.509").generateCertificates(in));
            }
            if (chain.isEmpty()) throw new IllegalArgumentException("--cert " + certPem + ": no certificate in the file");
            Matcher m = KEY.matcher(Files.readString(Path.of(keyPem)));
            if (!m.find()) {
                throw new IllegalArgumentException("--key " + keyPem + ": not an unencrypted PKCS#8 PEM key "
                    + "(BEGIN PRIVATE KEY; openssl pkcs8 -topk8 -nocrypt converts one)");
            }
            PKCS8EncodedKeySpec der = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(1)));
            PrivateKey key = null;
            for (String alg : new String[] {"RSA", "EC"}) {
                try {
                    key = KeyFactory.getInstance(alg).generatePrivate(der);
                    break;
                } catch (InvalidKeySpecException e) {
                    // the next algorithm
                }
            }
            if (key == null) throw new IllegalArgumentException("--key " + keyPem + ": neither an RSA nor an EC key");
            char[] pw = "bench".toCharArray();  // the in-memory store's own
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("client", key, pw, chain.toArray(new Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            return kmf.getKeyManagers();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("--cert " + certPem + " / --key " + keyPem + ": " + e.getMessage());
        }
    }

    /** The CA certificate(s) of a PEM file to verify the broker with. */
    public static TrustManager[] trustManagers(String pem) {
        try (InputStream in = Files.newInputStream(Path.of(pem))) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                ks.setCertificateEntry("ca" + i++, c);
            }
            if (i == 0) throw new IllegalArgumentException("--ca " + pem + ": no certificate in the file");
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            return tmf.getTrustManagers();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("--ca " + pem + ": " + e.getMessage());
        }
    }
}
