// The rates Tidings ships with, per message, in USD, by the recipient's country and the message's
// category. They are modelled on Meta's published per-message rates for the WhatsApp Business
// Platform (2025), rounded. They become the shipped book's rows, with Meta's dated rules (when
// service messages and in-window utility templates are charged): shipped-book.ts. An operator sets
// their own with `tidings prices load` or TIDINGS_PRICES_FILE (prices.ts).
import type { PriceFile } from './prices.ts';

export const DEFAULT_PRICES: PriceFile = {
  currency: 'USD',
  default: { marketing: '0.0604', utility: '0.0077', authentication: '0.0077', service: '0' },
  countries: {
    AE: { marketing: '0.0384', utility: '0.0157', authentication: '0.0178' },
    AR: { marketing: '0.0618', utility: '0.0260', authentication: '0.0260' },
    AT: { marketing: '0.1323', utility: '0.0500', authentication: '0.0748' },
    AU: { marketing: '0.0860', utility: '0.0140', authentication: '0.0140' },
    BR: { marketing: '0.0625', utility: '0.0068', authentication: '0.0068' },
    CA: { marketing: '0.0250', utility: '0.0034', authentication: '0.0135' },
    CH: { marketing: '0.1323', utility: '0.0500', authentication: '0.0748' },
    CL: { marketing: '0.0889', utility: '0.0200', authentication: '0.0200' },
    CO: { marketing: '0.0125', utility: '0.0008', authentication: '0.0008' },
    DE: { marketing: '0.1365', utility: '0.0550', authentication: '0.0768' },
    EG: { marketing: '0.1073', utility: '0.0036', authentication: '0.0036' },
    ES: { marketing: '0.0615', utility: '0.0200', authentication: '0.0357' },
    FR: { marketing: '0.0859', utility: '0.0300', authentication: '0.0692' },
    GB: { marketing: '0.0529', utility: '0.0220', authentication: '0.0358' },
    ID: { marketing: '0.0411', utility: '0.0250', authentication: '0.0300' },
    IL: { marketing: '0.0353', utility: '0.0053', authentication: '0.0053' },
    IN: { marketing: '0.0107', utility: '0.0014', authentication: '0.0014' },
    IT: { marketing: '0.0691', utility: '0.0300', authentication: '0.0378' },
    KE: { marketing: '0.0198', utility: '0.0040', authentication: '0.0040' },
    MX: { marketing: '0.0305', utility: '0.0085', authentication: '0.0085' },
    MY: { marketing: '0.0860', utility: '0.0140', authentication: '0.0140' },
    NG: { marketing: '0.0516', utility: '0.0067', authentication: '0.0067' },
    NL: { marketing: '0.1597', utility: '0.0500', authentication: '0.0720' },
    PE: { marketing: '0.0703', utility: '0.0200', authentication: '0.0200' },
    PK: { marketing: '0.0473', utility: '0.0054', authentication: '0.0054' },
    PL: { marketing: '0.0980', utility: '0.0320', authentication: '0.0550' },
    PT: { marketing: '0.0980', utility: '0.0320', authentication: '0.0550' },
    RU: { marketing: '0.0802', utility: '0.0400', authentication: '0.0400' },
    SA: { marketing: '0.0455', utility: '0.0107', authentication: '0.0107' },
    TR: { marketing: '0.0109', utility: '0.0053', authentication: '0.0053' },
    US: { marketing: '0.0250', utility: '0.0034', authentication: '0.0135' },
    ZA: { marketing: '0.0379', utility: '0.0076', authentication: '0.0076' },
  },
  // Outbound voice per started minute, modelled on Twilio's published programmable-voice rates to
  // mobiles (2025), rounded.
  voice: {
    default: '0.0600',
    countries: {
      AU: '0.0320',
      BR: '0.0450',
      CA: '0.0140',
      DE: '0.0850',
      ES: '0.0400',
      FR: '0.0450',
      GB: '0.0250',
      IN: '0.0500',
      IT: '0.0400',
      MX: '0.0350',
      US: '0.0140',
    },
  },
};
