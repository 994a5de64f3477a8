package dev.idem.payments;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;

/** The gateways' RSA public keys and their SHA256withRSA signatures, with the JDK alone. */
public final class Rsa {

    private static final String CERTIFICATE = "-----BEGIN CERTIFICATE-----";

    private Rsa() {}

    /**
     * A public key as the gateway's console gives it: PEM {@code PUBLIC KEY}, a PEM certificate
     * (WeChat Pay's platform certificates), or the bare base64 of the key (Alipay's console).
     * Called at start-up: what is wrong is named by {@code name}, never by the key's text.
     */
    public static PublicKey publicKey(String name, String pem) {
        String text = pem.trim();
        try {
            if (text.startsWith(CERTIFICATE)) {
                return CertificateFactory.getInstance("X.509")
                        .generateCertificate(new ByteArrayInputStream(text.getBytes(StandardCharsets.US_ASCII)))
                        .getPublicKey();
            }
            String base64 = text.replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "").replaceAll("\\s", "");
            return KeyFactory.getInstance("RSA")
                    .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(base64)));
        } catch (GeneralSecurityException | IllegalArgumentException unreadable) {
            throw new IllegalArgumentException(name + " is not an RSA public key in PEM (PUBLIC KEY or CERTIFICATE)");
        }
    }

    /** Whether {@code base64Signature} is {@code content}'s SHA256withRSA signature by {@code key}. */
    public static boolean verifies(PublicKey key, byte[] content, String base64Signature) {
        try {
            Signature verifier = Signature.getInstance("SHA256withRSA");
            verifier.initVerify(key);
            verifier.update(content);
            return verifier.verify(Base64.getDecoder().decode(base64Signature.trim()));
        } catch (GeneralSecurityException | IllegalArgumentException notASignature) {
            return false;
        }
    }
}
